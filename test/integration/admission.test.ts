/**
 * Admission control on a real gateway whose Elasticsearch is slowed: the run's cluster behind a
 * TCP forwarder that holds its answers back (as the outage test does). With two requests in
 * flight and two queued, the next is answered 503 `overloaded` with Retry-After at once (a list
 * before any work, by the rate-limit middleware), the queued ones after their longest wait; a
 * client holding half the queue cannot queue more; once Elasticsearch answers, the admitted ones
 * are served and new requests are admitted again. Clients are distinct loopback addresses.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readAllRows } from '../../generator/read-bundle.ts';
import { expectError } from '../support/expect.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { getFrom } from '../support/loopback-client.ts';
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
    env: { ES_MAX_IN_FLIGHT: '2', ES_QUEUE: '2', ES_QUEUE_MS: '400', RESPONSE_CACHE: 'off' },
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
    // 127.0.0.1 may queue one request (half the queue), not two; another client may.
    const queuedOwn = timed(`/v1/entities/${ids[2]}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const share = await timed(`/v1/entities/${ids[3]}`);
    expectError(share, 503, 'overloaded');
    const queued = timed(`/v1/entities/${ids[2]}`, '127.0.0.2');
    await new Promise((resolve) => setTimeout(resolve, 50));

    // The queue is full: refused at once, whoever asks, whatever the route.
    const refused = await timed(`/v1/entities/${ids[3]}`, '127.0.0.3');
    expectError(refused, 503, 'overloaded');
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.ms).toBeLessThan(300);
    expectError(await timed('/v1/events?limit=5', '127.0.0.4'), 503, 'overloaded');

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
});
