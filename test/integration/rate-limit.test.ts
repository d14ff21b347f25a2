/**
 * Per-client budgets on a real gateway and Elasticsearch, clients on distinct loopback
 * addresses: the RateLimit fields on every answer, decreasing by each request's cost; 429
 * `rate_limited` with Retry-After once the budget is spent, and 200 again after the window
 * renews; other clients untouched; forwarding headers believed only from a trusted proxy;
 * loopback probes never limited; downloads limited by how many run at once.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAllRows } from '../../generator/read-bundle.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { type Answer, getFrom, remaining } from '../support/loopback-client.ts';

let gw: TestGateway;
let entity: string;

// 10 points per 2 s window; one download at a time; 127.0.0.3 is our proxy.
const POLICY = '"default";q=10;w=2, "downloads";q=1;qu="concurrent-requests"';

beforeAll(async () => {
  gw = await startTestGateway({ name: 'rate-limit', scale: 1, seed: 71, env: { RATE_LIMIT: '5/10', EXPORT_CONCURRENCY: '1', TRUSTED_PROXIES: '127.0.0.3' } });
  entity = encodeURIComponent(String((await readAllRows(gw.bundleDir, 'entities.jsonl'))[0]!.id));
}, 300_000);

afterAll(() => gw?.close());

const at = (path: string) => `${gw.url}${path}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Spends a client's whole budget with list pages (2 points each) and returns the refusal. */
async function exhaust(from: string, headers: Record<string, string> = {}): Promise<Answer> {
  for (let i = 0; i < 10; i += 1) {
    const answer = await getFrom(from, at('/v1/entities?limit=1'), headers);
    if (answer.status === 429) return answer;
    expect(answer.status).toBe(200);
  }
  throw new Error(`${from} was never refused`);
}

/** Waits until the client's window renews (the next request is the first of a new window). */
async function renewed(answer: Answer): Promise<void> {
  await sleep(Number(answer.headers['retry-after']) * 1000 + 50);
}

describe('per-client rate limit', () => {
  it('answers RateLimit-Policy and RateLimit on every answer, decreasing by each request cost', async () => {
    const from = '127.0.0.2';
    const detail = await getFrom(from, at(`/v1/entities/${entity}`));
    expect(detail.status).toBe(200);
    expect(detail.headers['ratelimit-policy']).toBe(POLICY);
    const first = remaining(detail)!;
    expect(first.r).toBe(9);
    expect(first.t).toBeGreaterThanOrEqual(1);
    expect(first.t).toBeLessThanOrEqual(2);

    const list = await getFrom(from, at('/v1/entities?limit=1'));
    expect(remaining(list)!.r).toBe(7);
    const search = await getFrom(from, at('/v1/search?q=zeta'));
    expect(remaining(search)!.r).toBe(4);
    // Errors carry them too.
    const bad = await getFrom(from, at('/v1/entities?limit=0'));
    expect(bad.status).toBe(400);
    expect(remaining(bad)!.r).toBe(2);
    expect(bad.headers['ratelimit-policy']).toBe(POLICY);
  });

  it('answers 429 rate_limited with Retry-After once the budget is spent, and 200 after it renews', async () => {
    const from = '127.0.0.4';
    const refused = await exhaust(from);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'rate_limited' });
    expect(refused.body.error.message).toMatch(/retry after \d s/);
    const wait = Number(refused.headers['retry-after']);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(2);
    expect(remaining(refused)).toEqual({ r: 0, t: expect.any(Number) });
    expect(refused.headers['cache-control']).toBe('no-store');

    // The refusals that follow are answered before the middleware chain, with the same fields.
    const metric = async () => Number(/_http_early_refusals_total (\d+)/.exec((await gw.get('/metrics')).text)?.[1]);
    const early = await metric();
    for (const path of ['/v1/entities?limit=1', `/v1/entities/${entity}`, '/v1/search?q=x']) {
      const next = await getFrom(from, at(path));
      expect(next.status, path).toBe(429);
      expect(next.body.error.code).toBe('rate_limited');
      expect(Number(next.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(next.headers['ratelimit-policy']).toBe(POLICY);
      expect(remaining(next)).toEqual({ r: 0, t: expect.any(Number) });
      // The same fields as the full stack's refusal (the connection's own and the countdown aside).
      const fields = (headers: Record<string, unknown>) => Object.keys(headers).filter((name) => !['date', 'connection', 'keep-alive'].includes(name)).sort();
      expect(fields(next.headers)).toEqual(fields(refused.headers));
      for (const name of ['cache-control', 'content-type', 'access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-max-age', 'x-content-type-options']) {
        expect(next.headers[name], name).toBe(refused.headers[name]);
      }
      expect(next.body.meta).toEqual(refused.body.meta);
    }
    expect(await metric()).toBe(early + 3);

    // Another client is not affected.
    expect((await getFrom('127.0.0.5', at('/v1/entities?limit=1'))).status).toBe(200);

    await renewed(refused);
    const again = await getFrom(from, at('/v1/entities?limit=1'));
    expect(again.status).toBe(200);
    expect(remaining(again)!.r).toBe(8);
  });

  it('never limits /v1/health, /v1/ready and /metrics for loopback, even once the budget is spent', async () => {
    const from = '127.0.0.6';
    await exhaust(from);
    for (const probe of ['/v1/health', '/v1/ready', '/metrics', '/v1/metrics', '/v1/health', '/v1/health']) {
      const answer = await getFrom(from, at(probe));
      expect(answer.status, probe).toBe(200);
      expect(answer.headers['ratelimit-policy'], probe).toBe(POLICY);
    }
    expect((await getFrom(from, at('/v1/entities?limit=1'))).status).toBe(429);
  });

  it('answers a path no route serves 404, never 429, once the budget is spent (its cost comes from the route matched)', async () => {
    const from = '127.0.0.8';
    await exhaust(from);
    for (const path of ['/v1/nowhere', '/v1/entities/x/nothing/here', '/v2/entities']) expect((await getFrom(from, at(path))).status, path).toBe(404);
    expect((await getFrom(from, at('/v1/entities?limit=1'))).status).toBe(429);
  });

  it('ignores X-Forwarded-For and Forwarded from a peer that is not a trusted proxy', async () => {
    const from = '127.0.0.7';
    let n = 0;
    const spoof = () => ({ 'X-Forwarded-For': `198.51.100.${(n += 1)}`, Forwarded: `for=203.0.113.${n}` });
    for (let i = 0; i < 5; i += 1) {
      const answer = await getFrom(from, at('/v1/entities?limit=1'), spoof());
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    }
    // Every rotation was the same client: its budget is spent.
    expect((await getFrom(from, at('/v1/entities?limit=1'), spoof())).status).toBe(429);
  });

  it('believes the forwarded client from a trusted proxy: each its own budget', async () => {
    const proxy = '127.0.0.3';
    const alice = { 'X-Forwarded-For': '198.51.100.20' };
    const bob = { 'X-Forwarded-For': '198.51.100.21, 127.0.0.3' };
    const refused = await exhaust(proxy, alice);
    expect(refused.status).toBe(429);
    const other = await getFrom(proxy, at('/v1/entities?limit=1'), bob);
    expect(other.status).toBe(200);
    expect(remaining(other)!.r).toBe(8);
    // The proxy's own requests (no header) are its own client, and a forwarded client's probe is not loopback.
    expect((await getFrom(proxy, at('/v1/entities?limit=1'))).status).toBe(200);
    const probe = await getFrom(proxy, at('/v1/health'), { 'X-Forwarded-For': '198.51.100.22' });
    expect(remaining(probe)!.r).toBe(9);
  });

  it('limits downloads by how many one client runs at once, not by requests', async () => {
    // Holds a download open: headers read, body not consumed yet.
    const hold = (from: string) =>
      new Promise<{ status: number; finish: () => Promise<void> }>((resolve, reject) => {
        const req = request(at('/v1/exports/entities.jsonl'), { localAddress: from, agent: false, headers: { 'Accept-Encoding': 'identity' } }, (res) => {
          res.pause();
          resolve({ status: res.statusCode!, finish: () => new Promise<void>((done) => res.on('end', done).on('close', done).resume()) });
        });
        req.on('error', reject).end();
      });
    const from = '127.0.0.8';
    const first = await hold(from);
    expect(first.status).toBe(200);
    const second = await getFrom(from, at('/v1/exports/manifest.json'));
    // A small file may be written whole into the socket buffers at once: then the first download is already over.
    if (second.status === 429) {
      expect(second.body.error.code).toBe('rate_limited');
      expect(second.headers['retry-after']).toBe('1');
      expect(second.headers.ratelimit).toBe('"downloads";r=0');
    }
    expect((await getFrom('127.0.0.9', at('/v1/exports/manifest.json'))).status).toBe(200);
    await first.finish();
    await sleep(50);
    for (let i = 0; i < 15; i += 1) {
      const answer = await getFrom(from, at('/v1/exports/manifest.json'));
      expect(answer.status).toBe(200);
      expect(answer.headers.ratelimit).toBe('"downloads";r=0');
    }
  });
});
