/**
 * Admission control on a real gateway whose Elasticsearch is slowed: the run's cluster behind a
 * TCP forwarder that holds its answers back (as the outage test does). With two requests in
 * flight and one queued, the next is answered 503 `overloaded` with Retry-After at once, the
 * queued one after its longest wait; once Elasticsearch answers, the admitted ones are served
 * and new requests are admitted again.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readAllRows } from '../../generator/read-bundle.ts';
import { expectError } from '../support/expect.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
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
    env: { ES_MAX_IN_FLIGHT: '2', ES_QUEUE: '1', ES_QUEUE_MS: '400' },
  });
  ids = (await readAllRows(gw.bundleDir, 'entities.jsonl')).slice(0, 4).map((row) => encodeURIComponent(String(row.id)));
}, 300_000);

afterAll(async () => {
  await gw?.close();
  await proxy?.close();
});

const timed = async (path: string) => {
  const started = performance.now();
  const answer = await gw.get(path);
  return { ...answer, ms: performance.now() - started };
};

describe('admission control', () => {
  it('answers 503 overloaded with Retry-After at once past the cap and its queue, and admits again once Elasticsearch answers', async () => {
    // Warm the one-second cache of the live generation: from here each detail is one ES request.
    expect((await gw.get(`/v1/entities/${ids[0]}`)).status).toBe(200);
    proxy.hold();
    const inFlight = [timed(`/v1/entities/${ids[0]}`), timed(`/v1/entities/${ids[1]}`)];
    await proxy.holding();
    const queued = timed(`/v1/entities/${ids[2]}`);
    await new Promise((resolve) => setTimeout(resolve, 50));

    const refused = await timed(`/v1/entities/${ids[3]}`);
    expectError(refused, 503, 'overloaded');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.ms).toBeLessThan(300);
    // A list is refused alike, whatever the route.
    expectError(await gw.get('/v1/events?limit=5'), 503, 'overloaded');

    // The queued request waited its 400 ms, then was refused rather than left to time out.
    const gaveUp = await queued;
    expectError(gaveUp, 503, 'overloaded');
    expect(gaveUp.ms).toBeGreaterThanOrEqual(350);
    expect(gaveUp.ms).toBeLessThan(3_000);

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
