/**
 * Admission control on a real gateway whose Elasticsearch is slowed: the run's cluster behind a
 * TCP forwarder that holds its answers back (as the outage test does). With two requests in
 * flight and two queued, the next is answered 503 `overloaded` with Retry-After at once (a list
 * before any work, by the rate-limit middleware), the queued ones after their longest wait; a
 * client holding half the queue cannot queue more; once Elasticsearch answers, the admitted ones
 * are served and new requests are admitted again. An adaptive queue that has stood lets a newcomer
 * take the place of its oldest waiter, refused at once. Clients are distinct loopback addresses.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readAllRows } from '../../generator/read-bundle.ts';
import { expectError } from '../support/expect.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { getFrom } from '../support/loopback-client.ts';
import { loadConfig } from '../../src/config.ts';
import { startServer } from '../../src/server.ts';
import { type TcpProxy, startTcpProxy } from '../support/tcp-proxy.ts';

let gw: TestGateway;
let proxy: TcpProxy;
let ids: string[];

beforeAll(async () => {
  proxy = await startTcpProxy(inject('esUrl'));
  gw = await startTestGateway({
    name: 'admission',
    scale: 1,
    seed: 81,
    gatewayEsUrl: proxy.url,
    // Every request here must reach Elasticsearch: no response cache, no coalescing.
    // In arrival order: what is held here stands longer than the 100 ms after which an adaptive
    // queue changes order (the last test shows that).
    env: { ES_MAX_IN_FLIGHT: '2', ES_QUEUE: '2', ES_QUEUE_MS: '400', ES_QUEUE_ORDER: 'fifo', RESPONSE_CACHE: 'off' },
  });
  ids = (await readAllRows(gw.bundleDir, 'entities.jsonl')).slice(0, 4).map((row) => encodeURIComponent(String(row.id)));
}, 300_000);

afterAll(async () => {
  await gw?.close();
  await proxy?.close();
});

/** GET from a loopback address, timed. */
const timed = async (path: string, from = '127.0.0.1') => {
  const started = performance.now();
  const answer = await getFrom(from, `${gw.url}${path}`);
  return { ...answer, ms: performance.now() - started };
};

describe('admission control', () => {
  it('answers 503 overloaded with Retry-After at once past the cap and its queue, and admits again once Elasticsearch answers', async () => {
    // Warm the one-second cache of the live generation: from here each detail is one ES request.
    expect((await gw.get(`/v1/entities/${ids[0]}`)).status).toBe(200);
    proxy.hold();
    // Two clients, one slot each (a client has at most a quarter of the slots, at least one).
    const inFlight = [timed(`/v1/entities/${ids[0]}`), timed(`/v1/entities/${ids[1]}`, '127.0.0.5')];
    await proxy.holding();
    // 127.0.0.1 may queue one request behind its own (half the queue), not two.
    const queuedOwn = timed(`/v1/entities/${ids[2]}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const share = await timed(`/v1/entities/${ids[3]}`);
    expectError(share, 503, 'overloaded');
    // A client with nothing in flight does not wait behind the others' requests: refused at once.
    const stranger = await timed(`/v1/entities/${ids[2]}`, '127.0.0.2');
    expectError(stranger, 503, 'overloaded');
    expect(stranger.ms).toBeLessThan(300);
    // 127.0.0.5 queues behind its own.
    const queued = timed(`/v1/entities/${ids[2]}`, '127.0.0.5');
    await new Promise((resolve) => setTimeout(resolve, 50));

    // The queue is full: refused at once, whoever asks, whatever the route.
    const refused = await timed(`/v1/entities/${ids[3]}`, '127.0.0.3');
    expectError(refused, 503, 'overloaded');
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.ms).toBeLessThan(300);
    // A list while saturated is refused before Koa, as the full stack refuses (`share` above).
    const list = await timed('/v1/events?limit=5', '127.0.0.4');
    expectError(list, 503, 'overloaded');
    expect(list.body).toEqual(share.body);
    // Every field the full stack sends, and no other (the connection's own fields aside).
    const fields = (headers: Record<string, unknown>) => Object.fromEntries(Object.entries(headers).filter(([name]) => !['date', 'connection', 'keep-alive'].includes(name)));
    expect(fields(list.headers)).toEqual(fields(share.headers));

    // The queued requests waited their 400 ms, then were refused rather than left to time out.
    for (const gaveUp of await Promise.all([queuedOwn, queued])) {
      expectError(gaveUp, 503, 'overloaded');
      expect(gaveUp.ms).toBeGreaterThanOrEqual(350);
      expect(gaveUp.ms).toBeLessThan(3_000);
    }

    proxy.release();
    for (const answer of await Promise.all(inFlight)) expect(answer.status).toBe(200);
    for (const id of ids) expect((await gw.get(`/v1/entities/${id}`)).status).toBe(200);
  });

  it('serves what needs no Elasticsearch while it is saturated', async () => {
    await gw.get('/v1/entities?limit=1');
    proxy.hold();
    const held = [gw.get(`/v1/entities/${ids[0]}`), gw.get(`/v1/entities/${ids[1]}`)];
    await proxy.holding();
    expect((await gw.get('/v1/health')).status).toBe(200);
    expect((await gw.get('/v1/exports/manifest.json')).status).toBe(200);
    proxy.release();
    await Promise.all(held);
  });

  it('refuses before Koa while saturated, spending each request\'s points once (429 once the budget is spent)', async () => {
    // The same indices, with a budget of 3 points per 3 s: one list (2 points), not two.
    const config = loadConfig({ INDEX_PREFIX: gw.prefix, DATA_DIR: gw.config.dataDir, PORT: '0', LOG_LEVEL: 'silent', ES_MAX_IN_FLIGHT: '2', ES_QUEUE: '2', ES_QUEUE_MS: '400', ES_QUEUE_ORDER: 'fifo', RESPONSE_CACHE: 'off', RATE_LIMIT: '1/3' });
    const limited = await startServer(config, proxy.url);
    const from = (address: string, path: string) => getFrom(address, `${limited.url}${path}`);
    const early = async () => Number(/_http_early_refusals_total (\d+)/.exec((await from('127.0.0.1', '/metrics')).body)?.[1]);
    try {
      expect((await from('127.0.0.20', `/v1/entities/${ids[0]}`)).status).toBe(200);
      const before = await early();
      proxy.hold();
      const inFlight = [from('127.0.0.21', `/v1/entities/${ids[0]}`), from('127.0.0.22', `/v1/entities/${ids[1]}`)];
      await proxy.holding();
      // Each client queues one behind its own: the queue is full, and nobody else may wait.
      const queued = [from('127.0.0.21', `/v1/entities/${ids[2]}`), from('127.0.0.22', `/v1/entities/${ids[3]}`)];
      await new Promise((resolve) => setTimeout(resolve, 50));

      const first = await from('127.0.0.25', '/v1/events?limit=5');
      expectError(first, 503, 'overloaded');
      expect(first.headers.ratelimit).toMatch(/^"default";r=1;t=\d+$/);
      const spent = await from('127.0.0.25', '/v1/events?limit=5');
      expectError(spent, 429, 'rate_limited');
      expect(spent.headers.ratelimit).toMatch(/^"default";r=0;t=\d+$/);
      expectError(await from('127.0.0.25', '/v1/entities?limit=1'), 429, 'rate_limited');

      proxy.release();
      await Promise.all([...inFlight, ...queued]);
      expect(await early()).toBe(before + 3);
      // Not saturated: the full stack answers, spending as it does.
      const served = await from('127.0.0.26', '/v1/events?limit=5');
      expect(served.status).toBe(200);
      expect(served.headers.ratelimit).toMatch(/^"default";r=1;t=\d+$/);
    } finally {
      proxy.release();
      await limited.close();
    }
  });

  it('once the queue has stood 100 ms, lets a newcomer take the place of a waiter that waited 25 ms, refusing that one at once', async () => {
    // Three slots, one per client; a queue of two, one place per client.
    const config = loadConfig({ INDEX_PREFIX: gw.prefix, DATA_DIR: gw.config.dataDir, PORT: '0', LOG_LEVEL: 'silent', ES_MAX_IN_FLIGHT: '3', ES_QUEUE: '2', ES_QUEUE_MS: '10000', RESPONSE_CACHE: 'off', RATE_LIMIT: 'off' });
    const adaptive = await startServer(config, proxy.url);
    const from = async (address: string, path: string) => {
      const started = performance.now();
      const answer = await getFrom(address, `${adaptive.url}${path}`);
      return { ...answer, ms: performance.now() - started };
    };
    try {
      expect((await from('127.0.0.30', `/v1/entities/${ids[0]}`)).status).toBe(200);
      proxy.hold();
      const inFlight = [from('127.0.0.31', `/v1/entities/${ids[0]}`), from('127.0.0.32', `/v1/entities/${ids[1]}`), from('127.0.0.33', `/v1/entities/${ids[2]}`)];
      await proxy.holding();
      await new Promise((resolve) => setTimeout(resolve, 50));
      const oldest = from('127.0.0.31', `/v1/entities/${ids[2]}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const other = from('127.0.0.32', `/v1/entities/${ids[3]}`);
      // The queue is full; once it has stood 100 ms and its oldest waited 25, a newcomer gets in.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const newcomer = from('127.0.0.33', `/v1/entities/${ids[0]}`);
      const displaced = await oldest;
      expectError(displaced, 503, 'overloaded');
      expect(displaced.headers['retry-after']).toBe('1');
      // Refused when it lost its place, long before its 10 s in the queue were up.
      expect(displaced.ms).toBeLessThan(5_000);
      proxy.release();
      for (const answer of await Promise.all([...inFlight, other, newcomer])) expect(answer.status).toBe(200);
      // /metrics: two requests admitted through the queue, one refused, nothing left running.
      const metrics = (await from('127.0.0.1', '/metrics')).body;
      const value = (name: string) => Number(new RegExp(`^\\w+_${name} (\\S+)$`, 'm').exec(metrics)?.[1]);
      expect(value('admission_wait_seconds_count')).toBe(2);
      expect(value('admission_wait_seconds_sum')).toBeGreaterThan(0.2);
      expect(value('admission_refused_total')).toBe(1);
      expect(value('admission_in_flight')).toBe(0);
      expect(value('admission_queued')).toBe(0);
    } finally {
      proxy.release();
      await adaptive.close();
    }
  });
});
