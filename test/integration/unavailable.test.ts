/**
 * When there is nothing to serve: a cluster with no generation loaded (ready = degraded 503,
 * lists = 503 `unavailable` with Retry-After), a cluster that does not answer (503), one that
 * answers too late (504), and a live alias gone after a generation was served (503, logged with
 * Elasticsearch's reason). Health never depends on Elasticsearch; no ES text leaks.
 */
import { type Server, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { type RunningServer, startServer } from '../../src/server.ts';
import { freePort } from '../../scripts/elasticsearch.ts';
import type { Client } from '@elastic/elasticsearch';
import { META_INDEX, aliasName, indexName } from '../../src/indices/generation.ts';
import { LIVE_CACHE_MS } from '../../src/search/search-service.ts';
import { testClient, uniquePrefix } from '../support/elasticsearch.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { type LogCapture, captureLog } from '../support/log-capture.ts';

const get = async (base: string, route: string) => {
  const res = await fetch(`${base}${route}`);
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
};

function gateway(esUrl: string, env: Record<string, string> = {}): Promise<RunningServer> {
  return startServer(loadConfig({ INDEX_PREFIX: uniquePrefix('empty'), PORT: '0', LOG_LEVEL: 'silent', ...env }), esUrl);
}

describe('no generation loaded', () => {
  let gw: RunningServer;
  beforeAll(async () => void (gw = await gateway(inject('esUrl'))));
  afterAll(() => gw?.close());

  it('is degraded, not ready, while health is ok', async () => {
    const ready = await get(gw.url, '/v1/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.data).toMatchObject({ status: 'degraded', manifest: false, generation: null });
    expect(ready.headers.get('retry-after')).toBe('5');
    expect((await get(gw.url, '/v1/health')).status).toBe(200);
  });

  it.each(['/v1/entities', '/v1/killmails', '/v1/ops/freshness', '/v1/exports/manifest.json', '/v1/current/ownership'])('answers %s with 503 unavailable', async (route) => {
    const { status, body, headers } = await get(gw.url, route);
    expect(status).toBe(503);
    expect(body.error.code).toBe('unavailable');
    expect(headers.get('retry-after')).toBe('5');
  });
});

describe('Elasticsearch unreachable or too slow', () => {
  let silent: Server;
  let silentPort: number;
  const sockets = new Set<import('node:net').Socket>();

  beforeAll(async () => {
    // Accepts connections and never answers: every request runs into the client's timeout.
    silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentPort = (silent.address() as { port: number }).port;
  });
  afterAll(() => {
    for (const socket of sockets) socket.destroy();
    silent?.close();
  });

  it('answers 503 unavailable when nothing listens', async () => {
    const gw = await gateway(`http://127.0.0.1:${await freePort()}`);
    try {
      for (const route of ['/v1/ready', '/v1/entities', '/v1/search?q=x']) {
        const { status, body } = await get(gw.url, route);
        expect(status, route).toBe(503);
        expect(body.error).toEqual({ code: 'unavailable', message: expect.any(String) });
        expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|ConnectionError|ResponseError|index_not_found|connect /);
      }
      expect((await get(gw.url, '/v1/health')).status).toBe(200);
    } finally {
      await gw.close();
    }
  });

  it('answers 504 timeout when Elasticsearch does not answer in time', async () => {
    const gw = await gateway(`http://127.0.0.1:${silentPort}`, { ES_REQUEST_TIMEOUT_MS: '200' });
    try {
      const { status, body, headers } = await get(gw.url, '/v1/entities');
      expect(status).toBe(504);
      expect(body.error.code).toBe('timeout');
      // Transient: it says when to come back, as a 503 does.
      expect(headers.get('retry-after')).toBe('5');
    } finally {
      await gw.close();
    }
  });
});

describe('the live alias gone after a generation was served', () => {
  let gw: TestGateway;
  let log: LogCapture;
  let es: Client;
  beforeAll(async () => {
    log = captureLog();
    gw = await startTestGateway({ name: 'alias-gone', scale: 1, seed: 5, env: { LOG_LEVEL: 'warn' }, logDestination: log.destination });
    es = testClient();
  }, 300_000);
  afterAll(async () => {
    await gw?.close();
    await es?.close();
  });

  it('answers 503 unavailable with Retry-After, logs why, and serves again once it is back', async () => {
    expect((await gw.get('/v1/entities?limit=1')).status).toBe(200);
    const alias = aliasName(gw.prefix, META_INDEX);
    const index = indexName(gw.prefix, META_INDEX, gw.load.generation);
    await es.indices.deleteAlias({ index, name: alias });
    try {
      await new Promise((resolve) => setTimeout(resolve, LIVE_CACHE_MS + 100));
      const gone = await gw.get('/v1/entities?limit=1');
      expect(gone.status).toBe(503);
      expect(gone.body.error.code).toBe('unavailable');
      expect(gone.headers.get('retry-after')).not.toBeNull();
      expect(log.find('elasticsearch request failed').map((line) => line.es?.type)).toContain('index_not_found_exception');
    } finally {
      await es.indices.putAlias({ index, name: alias });
    }
    await new Promise((resolve) => setTimeout(resolve, LIVE_CACHE_MS + 100));
    expect((await gw.get('/v1/entities?limit=1')).status).toBe(200);
  });
});
