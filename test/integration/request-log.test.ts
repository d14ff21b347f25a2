/**
 * The request log: one `info` line per request with method, route pattern (never the raw URL
 * with its ids or search text), status, milliseconds and the generation that answered; off at
 * `LOG_LEVEL=warn`. Lines are captured from the gateway's pino destination; the last test runs
 * the gateway as a process (its own asynchronous stdout destination) and stops it.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readAllRows } from '../../generator/read-bundle.ts';
import { spawnGatewayProcess } from '../../harness/gateway-process.ts';
import { startServer } from '../../src/server.ts';
import { type LogCapture, captureLog } from '../support/log-capture.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';

let gw: TestGateway;
let log: LogCapture;

beforeAll(async () => {
  log = captureLog();
  gw = await startTestGateway({ name: 'request-log', scale: 1, seed: 41, env: { LOG_LEVEL: 'info' }, logDestination: log.destination });
}, 300_000);

afterAll(() => gw?.close());

/** Waits until `count` request lines are logged: a line is written when its response closes. */
async function requestLines(count: number): Promise<Record<string, any>[]> {
  for (let attempt = 0; attempt < 100 && log.find('request').length < count; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 20));
  return log.find('request');
}

describe('request log', () => {
  it('writes one line per request with the route pattern, status, time and generation', async () => {
    const entity = (await readAllRows(gw.bundleDir, 'entities.jsonl')).find((row) => row.environment === 'stillness')!;
    const q = 'needle-in-the-url';
    const requests: [url: string, init: RequestInit, expected: Record<string, unknown>][] = [
      [`/v1/entities/${encodeURIComponent(entity.id)}`, {}, { method: 'GET', route: '/v1/entities/:idOrSlug', status: 200, generation: gw.load.generation }],
      [`/v1/search?q=${q}`, {}, { method: 'GET', route: '/v1/search', status: 200, generation: gw.load.generation }],
      ['/v1/exports/manifest.json', { method: 'HEAD' }, { method: 'HEAD', route: '/v1/exports/:file', status: 200, generation: gw.load.generation }],
      ['/v1/entities?limit=0', {}, { method: 'GET', route: '/v1/entities', status: 400 }],
      [`/v1/no/such/${q}`, {}, { method: 'GET', route: 'unmatched', status: 404 }],
      ['/v1/health', { method: 'POST' }, { method: 'POST', route: 'unmatched', status: 405 }],
      ['/v1/health', { method: 'OPTIONS' }, { method: 'OPTIONS', route: 'unmatched', status: 204 }],
    ];
    const before = log.find('request').length;
    for (const [url, init] of requests) await (await fetch(`${gw.url}${url}`, init)).arrayBuffer();

    const lines = (await requestLines(before + requests.length)).slice(before);
    expect(lines).toHaveLength(requests.length);
    for (const [index, [url, , expected]] of requests.entries()) {
      const line = lines[index]!;
      expect(line, url).toMatchObject({ level: 30, ...expected });
      if (!('generation' in expected)) expect(line.generation, url).toBeUndefined();
      expect(typeof line.ms).toBe('number');
      expect(line.ms).toBeGreaterThanOrEqual(0);
      // Never the raw URL: no ids, no search text.
      const text = JSON.stringify(line);
      expect(text).not.toContain(entity.id);
      expect(text).not.toContain(q);
    }
  });

  it('names the client\'s X-Request-Id, and at debug logs each request as it is read', async () => {
    const debug = captureLog();
    const running = await startServer({ ...gw.config, logLevel: 'debug' }, gw.config.esUrl!, { logDestination: debug.destination });
    try {
      await (await fetch(`${running.url}/v1/entities?limit=1`, { headers: { 'X-Request-Id': 'polite-17' } })).arrayBuffer();
      await (await fetch(`${running.url}/v1/health`, { headers: { 'X-Request-Id': 'x'.repeat(65) } })).arrayBuffer();
      for (let attempt = 0; attempt < 100 && debug.lines().filter((line) => line.msg === 'request').length < 2; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 20));
      const lines = debug.lines().filter((line) => line.msg === 'request read' || line.msg === 'request');
      expect(lines.map((line) => [line.msg, line.requestId])).toEqual([
        ['request read', 'polite-17'],
        ['request', 'polite-17'],
        ['request read', undefined],
        ['request', undefined],
      ]);
      expect(lines[0]).toMatchObject({ level: 20, method: 'GET' });
    } finally {
      await running.close();
    }
  });

  it('is off at LOG_LEVEL=warn', async () => {
    const quiet = captureLog();
    const running = await startServer({ ...gw.config, logLevel: 'warn' }, gw.config.esUrl!, { logDestination: quiet.destination });
    try {
      // Lines are written as responses close: by the end of the last request the earlier ones are done.
      for (const url of ['/v1/health', '/v1/entities', '/v1/nope', '/v1/health']) await (await fetch(`${running.url}${url}`)).arrayBuffer();
      expect(quiet.lines()).toEqual([]);
    } finally {
      await running.close();
    }
  });

  it('writes out the last lines at shutdown: every request of a process stopped at once is in its log', async () => {
    const gateway = spawnGatewayProcess('src/server.ts', { ES_URL: inject('esUrl'), INDEX_PREFIX: gw.prefix, DATA_DIR: gw.config.dataDir, RATE_LIMIT: 'off' });
    const url = await gateway.listening;
    // Fewer bytes than one buffered write (4 KB gathers about 25 lines): without the flush at
    // shutdown, these would all still be in the buffer when the process exits.
    const paths = ['/v1/health', '/v1/entities?limit=1', '/v1/nope', '/v1/ready', '/v1/health'];
    for (const p of paths) await (await fetch(`${url}${p}`)).arrayBuffer();
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    const lines = gateway.stdout().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
    const requests = lines.filter((line) => line.msg === 'request');
    expect(requests.map((line) => line.status)).toEqual([200, 200, 404, 200, 200]);
    expect(lines.at(-1)?.msg).toBe('stopped');
  });
});
