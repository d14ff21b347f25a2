/**
 * The typed client (packages/client) against a real gateway: its iterator walks a list equal to
 * the file, in order; a mirror's walks with `include=removed` across two loads end equal to the
 * last bundle; a subscription whose connection is cut three times receives every new row once,
 * in order; a client over its budget waits as the gateway says and gets every page; a cursor of
 * another route is the API's error as the client's one error class. Expectations come from the
 * bundle files.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeNextExport } from '../../generator/next-export.ts';
import { withNewRows } from '../../generator/new-rows.ts';
import { type BundleRow, readAllRows } from '../../generator/read-bundle.ts';
import { RegistryError, createRegistryClient } from '../../packages/client/src/index.ts';
import { byteCompare, instantNanos, lastWins, newestFirst } from '../support/expect.ts';
import { bundleIdOf } from '../support/bundle-id.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';

let gw: TestGateway;
let work: string;
const stillness = (r: BundleRow) => r.environment === 'stillness';
const rowsOf = async (dir: string, file: string) => lastWins(await readAllRows(dir, file), (r) => r.id).filter(stillness);

beforeAll(async () => {
  gw = await startTestGateway({ name: 'client', scale: 2, seed: 61 });
  work = await mkdtemp(path.join(tmpdir(), 'client-'));
}, 120_000);

afterAll(() => gw?.close());

describe('lists', () => {
  it('rows() walks a list page by page, equal to the file in its order', async () => {
    const client = createRegistryClient({ baseUrl: gw.url });
    const got: string[] = [];
    for await (const row of client.rows('/v1/events', { query: { cycles: 'all', limit: 37 } })) got.push(String(row.id));
    const expected = newestFirst(await rowsOf(gw.bundleDir, 'events.jsonl'), (r) => r.occurredAt, (r) => r.id).map((r) => r.id);
    expect(got).toEqual(expected);
  });

  it('a cursor of another route is the API error, as a RegistryError', async () => {
    const client = createRegistryClient({ baseUrl: gw.url });
    const page = await client.get('/v1/events', { query: { limit: 1 } });
    const error = await client.get('/v1/killmails', { query: { cursor: page.nextCursor } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RegistryError);
    expect(error).toMatchObject({ status: 400, code: 'bad_request', parameter: 'cursor' });
    await expect(client.get('/v1/entities/{idOrSlug}', { path: { idOrSlug: 'no-such-entity' } })).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });
});

describe('a mirror and a subscriber across loads', () => {
  const cuts: number[] = [];
  let connections = 0;
  /**
   * Cuts each of the first three event streams in the middle of the rows of a load: what came
   * before passes up to half-way through the second event of the first bytes that hold rows, then
   * the connection errors (the client has the first event whole, half of the next, and must
   * resume after the first).
   */
  const cutting: typeof fetch = async (input, init) => {
    const response = await fetch(new Request(input, init));
    if (!response.headers.get('content-type')?.startsWith('text/event-stream') || !response.body) return response;
    connections += 1;
    if (connections > 3) return response;
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        const text = new TextDecoder().decode(value);
        const first = text.indexOf('data:');
        if (first === -1) return controller.enqueue(value);
        const end = text.indexOf('\n\n', first);
        const second = end === -1 ? -1 : text.indexOf('data:', end);
        const cut = second === -1 ? text.length : second + Math.ceil((text.indexOf('\n', second) - second) / 2);
        controller.enqueue(new TextEncoder().encode(text.slice(0, cut)));
        cuts.push(connections);
        await reader.cancel();
        controller.error(new TypeError('terminated'));
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };

  it('walks with include=removed end equal to the last bundle; a stream cut three times gets every new row once', async () => {
    const client = createRegistryClient({ baseUrl: gw.url, fetch: cutting });
    const mirror = new Map<string, unknown>();
    const apply = (row: { id: string; removed?: boolean }) => (row.removed === true ? mirror.delete(row.id) : mirror.set(row.id, row));
    const first = client.walk('/v1/events', undefined, { cycles: 'all', include: 'removed', limit: 50 });
    for await (const row of first) apply(row as { id: string });

    const streamed: string[] = [];
    const named: string[] = [];
    const stop = new AbortController();
    let live!: () => void;
    const joined = new Promise<void>((resolve) => (live = resolve));
    const subscriber = (async () => {
      const events = client.subscribe('/v1/events/stream', { query: { cycles: 'all' } }, { signal: stop.signal, onComment: (text) => text === 'live' && live(), onBundle: (b) => named.push(b.bundleId) });
      for await (const event of events) streamed.push(String(event.row.id));
    })().catch((error: unknown) => {
      if (!stop.signal.aborted) throw error;
    });
    await joined;

    // Three loads: each adds rows (the stream's), the last also removes and changes some (the mirror's).
    const bundles = [gw.bundleDir];
    for (const tag of ['two', 'three', 'four']) {
      const dir = path.join(work, tag);
      const removing = tag === 'four';
      await writeNextExport(bundles.at(-1)!, dir, {
        events: async function* (rows) {
          let i = 0;
          for await (const row of withNewRows(tag)(rows)) {
            i += 1;
            if (removing && i % 97 === 5) continue;
            yield removing && i % 89 === 7 ? { ...row, module: 'changed-by-four' } : row;
          }
        },
      });
      await gw.loadNext(dir);
      bundles.push(dir);
    }
    const second = client.walk('/v1/events', first.indexedThrough, { cycles: 'all', include: 'removed', limit: 50 });
    for await (const row of second) apply(row as { id: string });
    const last = await rowsOf(bundles.at(-1)!, 'events.jsonl');
    expect(second.indexedThrough! > first.indexedThrough!).toBe(true);
    expect([...mirror.keys()].sort()).toEqual(last.map((r) => r.id).sort());
    for (const row of last) expect(mirror.get(row.id), row.id).toEqual(row);

    // Every row new to a load, in the order rows became visible: load by load, then as they happened, then id.
    const expected: string[] = [];
    for (let n = 1; n < bundles.length; n += 1) {
      const old = new Set((await readAllRows(bundles[n - 1]!, 'events.jsonl')).map((r) => r.id));
      const added = (await rowsOf(bundles[n]!, 'events.jsonl')).filter((r) => !old.has(r.id));
      added.sort((a, b) => {
        const d = instantNanos(a.occurredAt) - instantNanos(b.occurredAt);
        return d !== 0n ? (d > 0n ? 1 : -1) : byteCompare(a.id, b.id);
      });
      expected.push(...added.map((r) => r.id));
    }
    // Every row in, on a connection the client opened after the last cut; then long enough for a row sent twice to show.
    const deadline = Date.now() + 30_000;
    while ((streamed.length < expected.length || connections < 4) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    stop.abort();
    await subscriber;
    expect(cuts).toEqual([1, 2, 3]);
    expect(connections).toBeGreaterThanOrEqual(4);
    expect(streamed).toEqual(expected);
    // Told each bundle its rows came from, once and in order: the first (from the headers), then each load's.
    const manifestIds = await Promise.all(bundles.map(bundleIdOf));
    expect(named).toEqual(manifestIds);
  }, 180_000);
});

describe('a client over its budget', () => {
  let limited: TestGateway;
  beforeAll(async () => {
    limited = await startTestGateway({ name: 'client-budget', scale: 1, seed: 62, env: { RATE_LIMIT: '2/4' } });
  }, 120_000);
  afterAll(() => limited?.close());

  it('waits as Retry-After and RateLimit say, and gets every page', async () => {
    const answers: { at: number; status: number; retryAfter?: string; rateLimit?: string }[] = [];
    const recording: typeof fetch = async (input, init) => {
      const at = Date.now();
      const response = await fetch(input, init);
      answers.push({ at, status: response.status, retryAfter: response.headers.get('retry-after') ?? undefined, rateLimit: response.headers.get('ratelimit') ?? undefined });
      return response;
    };
    const client = createRegistryClient({ baseUrl: limited.url, fetch: recording });
    const got: string[] = [];
    for await (const row of client.rows('/v1/entities', { query: { cycles: 'all', limit: 20 } })) got.push(String(row.id));
    const entities = await rowsOf(limited.bundleDir, 'entities.jsonl');
    expect(got.sort()).toEqual(entities.map((r) => r.id).sort());
    // Each wait the gateway asked for was waited before the next request.
    let waits = 0;
    for (const [i, answer] of answers.slice(0, -1).entries()) {
      const spent = /"default";r=0;t=(\d+)/.exec(answer.rateLimit ?? '')?.[1];
      const seconds = answer.status === 429 ? answer.retryAfter : spent;
      if (seconds === undefined) continue;
      waits += 1;
      expect(answers[i + 1]!.at - answer.at, `after answer ${i} (${answer.status})`).toBeGreaterThanOrEqual(Number(seconds) * 1000 - 50);
    }
    expect(waits).toBeGreaterThan(0);
  }, 120_000);
});
