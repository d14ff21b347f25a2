/**
 * The rehearsal's faulty proxy (scripts/rehearsal-sabotage.ts) against a small server of its
 * own: everything passes as it came, except the one planted defect, once.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FaultyProxy, type Planter, type ProxyFault, planter, startFaultyProxy } from '../../scripts/rehearsal-sabotage.ts';
import { openSse } from '../../harness/sse.ts';

let upstream: Server;
let target: string;
const EVENTS = [1, 2, 3, 4].map((n) => `id: e${n}\ndata: {"id":"row-${n}"}\n\n`).join('');

beforeAll(async () => {
  upstream = createServer((req, res) => {
    if (req.url!.startsWith('/stream')) return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`: hello\n\n${EVENTS}`);
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ data: [{ id: 'a' }, { id: 'b' }], url: req.url }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  target = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => upstream.close(resolve)));

async function withProxy(fault: ProxyFault, after: number, run: (proxy: FaultyProxy, plant: Planter) => Promise<void>, to = target): Promise<void> {
  const plant = planter(after);
  const proxy = await startFaultyProxy(to, fault, plant);
  try {
    await run(proxy, plant);
  } finally {
    await proxy.stop();
  }
}

const rowsOf = async (url: string) => {
  const stream = await openSse(url);
  await stream.ended;
  return { ids: stream.rows().map((r) => r.id), last: stream.lastId() };
};

describe('the faulty proxy', () => {
  it('sends one streamed row twice, once', () =>
    withProxy('stream-twice', 1, async (proxy, plant) => {
      expect(await rowsOf(`${proxy.url}/stream`)).toEqual({ ids: ['row-1', 'row-2', 'row-2', 'row-3', 'row-4'], last: 'e4' });
      expect(plant.plantedAt()).toBeGreaterThan(0);
      expect((await rowsOf(`${proxy.url}/stream`)).ids).toEqual(['row-1', 'row-2', 'row-3', 'row-4']);
    }));

  it('skips one streamed row but passes its id: the resume point moves past it', () =>
    withProxy('stream-skip', 2, async (proxy) => {
      expect(await rowsOf(`${proxy.url}/stream`)).toEqual({ ids: ['row-1', 'row-2', 'row-4'], last: 'e4' });
    }));

  it('drops the last row of one since_indexed page, and no other page', () =>
    withProxy('page-skip', 0, async (proxy) => {
      const page = async (path: string) => ((await (await fetch(`${proxy.url}${path}`)).json()) as { data: { id: string }[] }).data.map((r: { id: string }) => r.id);
      expect(await page('/v1/events?limit=2')).toEqual(['a', 'b']);
      expect(await page('/v1/events?since_indexed=x')).toEqual(['a']);
      expect(await page('/v1/events?since_indexed=x')).toEqual(['a', 'b']);
    }));

  it("answers one request 500, never a stream's", () =>
    withProxy('answer-500', 1, async (proxy) => {
      const statuses = [];
      for (const path of ['/v1/x', '/stream', '/v1/x', '/v1/x']) statuses.push((await fetch(`${proxy.url}${path}`)).status);
      expect(statuses).toEqual([200, 200, 500, 200]);
    }));

  it('plants once for every proxy of a run', async () => {
    const plant = planter(0);
    const [a, b] = [await startFaultyProxy(target, 'answer-500', plant), await startFaultyProxy(target, 'answer-500', plant)];
    try {
      expect([(await fetch(`${b.url}/v1/x`)).status, (await fetch(`${a.url}/v1/x`)).status, (await fetch(`${b.url}/v1/x`)).status]).toEqual([500, 200, 200]);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('reads one request and never answers it', () =>
    withProxy('never-answered', 0, async (proxy) => {
      await expect(fetch(`${proxy.url}/v1/x`, { signal: AbortSignal.timeout(500) })).rejects.toThrow(/timeout|aborted/i);
      expect((await fetch(`${proxy.url}/v1/x`)).status).toBe(200);
    }));

  it('closes the connection without an answer when its gateway is gone', async () => {
    const gone = createServer();
    await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
    const port = (gone.address() as AddressInfo).port;
    await new Promise((resolve) => gone.close(resolve));
    await withProxy('answer-500', 10, async (proxy) => {
      await expect(fetch(`${proxy.url}/v1/x`)).rejects.toThrow();
    }, `http://127.0.0.1:${port}`);
  });
});
