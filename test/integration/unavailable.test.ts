/**
 * When there is nothing to serve: a cluster with no generation loaded (ready = degraded 503,
 * lists = 503 `unavailable` with Retry-After), a cluster that does not answer (503), and one
 * that answers too late (504). Health never depends on Elasticsearch; no ES text leaks.
 */
import { type Server, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { type RunningServer, startServer } from '../../src/server.ts';
import { freePort } from '../../scripts/elasticsearch.ts';
import { uniquePrefix } from '../support/elasticsearch.ts';

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
