/**
 * The event streams against a real Elasticsearch: a stream open while the next generation
 * goes live receives exactly the rows new to it (the expected rows computed from the two
 * bundles' files), each once, as the list route answers them; filters narrow it; a client that
 * reconnects with its last id — after a row in the middle of a load, or after a whole load —
 * misses none and repeats none across two more generations; the per-client cap answers 429
 * with the RateLimit fields; a reader that stops reading is cut while the gateway answers
 * everyone else; what pages a list is a 400 here; shutdown ends streams at once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleRow, readAllRows } from '../../generator/read-bundle.ts';
import { withNewRows } from '../../generator/new-rows.ts';
import { writeNextExport } from '../../generator/next-export.ts';
import { INSTANT_MIN } from '../../src/time/instant.ts';
import { toEventListQuery } from '../../src/query/timeline.ts';
import { createClient } from '../../src/search/client.ts';
import { createSearchService } from '../../src/search/search-service.ts';
import { createStreamHub } from '../../src/stream/hub.ts';
import { decodeResumeToken, nanosText } from '../../src/stream/resume-token.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { byteCompare, expectError, instantNanos } from '../support/expect.ts';
import { type SseStream, openSse } from '../../harness/sse.ts';

const KEY = 'stream-cap-test-key-0001';
let gw: TestGateway;
let work: string;
/** Bundle directories of the generations loaded, in order. */
const bundles: string[] = [];
/** `meta.indexedThrough` of the first generation. */
let through: string;
const open: SseStream[] = [];

async function sse(route: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const stream = await openSse(`${gw.url}${route}`, headers);
  open.push(stream);
  return stream;
}

/** A stream that stands at the live generation: ready for the next. */
async function liveStream(route: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const stream = await sse(route, headers);
  expect(stream.status).toBe(200);
  expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
  await stream.until((s) => s.comments.includes('live'), 'live comment');
  return stream;
}

/** Writes and loads the next generation; returns its directory. */
async function loadNextGeneration(tag: string): Promise<string> {
  const dir = path.join(work, tag);
  await writeNextExport(bundles.at(-1)!, dir, { events: withNewRows(tag), killmails: withNewRows(tag) });
  await gw.loadNext(dir);
  bundles.push(dir);
  return dir;
}

/** Rows generation `n` (1-based in `bundles`) added, in the order they became visible (one load: as they happened, then id). */
async function added(n: number, stem: string, keep: (row: BundleRow) => boolean = (r) => r.environment === 'stillness'): Promise<BundleRow[]> {
  const old = new Set((await readAllRows(bundles[n - 1]!, `${stem}.jsonl`)).map((r) => r.id));
  return (await readAllRows(bundles[n]!, `${stem}.jsonl`))
    .filter((r) => keep(r) && !old.has(r.id))
    .sort((a, b) => {
      const d = instantNanos(a.occurredAt) - instantNanos(b.occurredAt);
      return d !== 0n ? (d > 0n ? 1 : -1) : byteCompare(a.id, b.id);
    });
}

const ids = (rows: readonly BundleRow[]) => rows.map((r) => r.id as string);
const settle = () => new Promise((resolve) => setTimeout(resolve, 2000));

beforeAll(async () => {
  gw = await startTestGateway({ name: 'stream', scale: 2, seed: 51, env: { API_KEYS: KEY, STREAMS_PER_CLIENT: '5', SHUTDOWN_TIMEOUT_MS: '600000' } });
  work = await mkdtemp(path.join(tmpdir(), 'stream-'));
  bundles.push(gw.bundleDir);
  through = (await gw.get('/v1/killmails?limit=1')).body.meta.indexedThrough;
}, 120_000);

afterAll(async () => {
  for (const stream of open) stream.close();
  await gw?.close();
  await rm(work, { recursive: true, force: true });
});

describe('event streams', () => {
  it('refuses what pages a list, unknown parameters and altered ids with a 400 naming them', async () => {
    for (const name of ['limit=5', 'cursor=x', 'sort=indexedAt:asc', 'select=id', 'format=csv', 'group_by=kind', 'bogus=1']) {
      expectError(await gw.get(`/v1/events/stream?${name}`), 400, 'bad_request', name.split('=')[0]);
    }
    expectError(await gw.get('/v1/killmails/stream?side=kills'), 400, 'bad_request', 'side');
    expectError(await gw.get('/v1/killmails/stream', { headers: { 'Last-Event-ID': 'forged.token' } }), 400, 'bad_request', 'Last-Event-ID');
  });

  it('sends each stream exactly the rows new to the next generation, as the list answers them, filtered, each once', async () => {
    const all = await liveStream('/v1/killmails/stream?cycles=all');
    const twin = await liveStream('/v1/killmails/stream?cycles=all');
    // A filter: the kind of the events the next export adds on top (the first rows of the file).
    const kind = (await readAllRows(gw.bundleDir, 'events.jsonl')).slice(1, 13).find((r) => r.environment === 'stillness')!.kind as string;
    const ofKind = await liveStream(`/v1/events/stream?cycles=all&kind=${encodeURIComponent(kind)}`);
    const utopia = await liveStream('/v1/events/stream?cycles=all&environment=utopia');
    await loadNextGeneration('second');

    const killmails = await added(1, 'killmails');
    const events = await added(1, 'events', (r) => r.environment === 'stillness' && r.kind === kind);
    const utopian = await added(1, 'events', (r) => r.environment === 'utopia');
    expect(killmails.length).toBeGreaterThan(0);
    expect(events.length).toBeGreaterThan(0);
    for (const [stream, rows] of [[all, killmails], [twin, killmails], [ofKind, events], [utopia, utopian]] as const) {
      await stream.until((s) => s.rows().length >= rows.length, `${rows.length} rows`);
    }
    await settle();
    expect(ids(all.rows())).toEqual(ids(killmails));
    expect(ids(twin.rows())).toEqual(ids(killmails));
    expect(ids(ofKind.rows())).toEqual(ids(events));
    expect(ids(utopia.rows())).toEqual(ids(utopian));
    // The rows as the list route answers them, in the same order.
    const listed = await gw.get(`/v1/killmails?cycles=all&sort=indexedAt:asc&since_indexed=${through}&limit=200`);
    expect(all.rows()).toEqual(listed.body.data);
    // Every stream ends on an id that resumes it: resumed from there, nothing comes again.
    const again = await sse('/v1/killmails/stream?cycles=all', { 'Last-Event-ID': all.lastId()! });
    await again.until((s) => s.comments.includes('live'), 'resumed: live');
    expect(again.status).toBe(200);
    expect(again.rows()).toEqual([]);
    for (const stream of [all, twin, ofKind, utopia, again]) stream.close();
  }, 180_000);

  it('resumes with Last-Event-ID or since_indexed across two generations: none missed, none twice', async () => {
    const reader = await liveStream('/v1/killmails/stream?cycles=all');
    await loadNextGeneration('third');
    const third = await added(2, 'killmails');
    await reader.until((s) => s.rows().length >= third.length, `${third.length} rows`);
    await settle();
    expect(ids(reader.rows())).toEqual(ids(third));
    // One client went away after five rows of the load; another after the whole load.
    const midway = reader.events.filter((e) => e.data !== undefined && e.event === undefined)[4]!.id!;
    const whole = reader.lastId()!;
    reader.close();
    await loadNextGeneration('fourth');
    const fourth = await added(3, 'killmails');

    const resumed = await sse('/v1/killmails/stream?cycles=all', { 'Last-Event-ID': midway });
    const after = await sse('/v1/killmails/stream?cycles=all', { 'Last-Event-ID': whole });
    const since = await sse(`/v1/killmails/stream?cycles=all&since_indexed=${through}`);
    const second = await added(1, 'killmails');
    const expected = { resumed: [...third.slice(5), ...fourth], after: fourth, since: [...second, ...third, ...fourth] };
    for (const [name, stream] of Object.entries({ resumed, after, since })) {
      await stream.until((s) => s.comments.includes('live'), `${name}: live`);
      expect(ids(stream.rows()), name).toEqual(ids(expected[name as keyof typeof expected]));
      stream.close();
    }
  }, 240_000);

  it('caps the streams of one client with a 429 carrying the RateLimit fields', async () => {
    const mine = [];
    for (let i = 0; i < 5; i += 1) mine.push(await liveStream('/v1/events/stream', { 'X-Api-Key': KEY }));
    const refused = await gw.get('/v1/events/stream', { headers: { 'X-Api-Key': KEY } });
    expectError(refused, 429, 'rate_limited');
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.headers.get('ratelimit-policy')).toContain('"streams";q=5');
    expect(refused.headers.get('ratelimit')).toContain('"streams";r=0');
    // Other clients are not affected.
    const other = await liveStream('/v1/events/stream');
    mine[0]!.close();
    other.close();
    // The closed one's place is free again.
    const freed = await (async () => {
      for (let i = 0; i < 50; i += 1) {
        const again = await sse('/v1/events/stream', { 'X-Api-Key': KEY });
        if (again.status === 200) return again;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error('the closed stream was never released');
    })();
    expect(freed.status).toBe(200);
    for (const stream of [...mine, freed]) stream.close();
  });

  it('cuts a reader that stops reading, within its bound, while the gateway answers everyone else', async () => {
    const client = createClient(gw.config.esUrl!, 10_000);
    const hub = createStreamHub({
      search: createSearchService({ client, prefix: gw.prefix }),
      cursorSecret: gw.config.cursorSecret,
      logger: pino({ level: 'silent' }),
      perClient: 1,
      max: 1,
      bufferBytes: 4096,
      stallMs: 200,
    });
    // A response whose client never takes a byte.
    const stalled = Object.assign(new Writable({ highWaterMark: 1024, write: () => {} }), { writeHead: () => {}, socket: undefined }) as unknown as ServerResponse;
    const bind = { environment: 'stillness', scope: { kind: 'all' } as const, sort: 'indexedAt:asc' as const };
    await hub.open({ client: 'ip:test', start: { indexedAt: INSTANT_MIN }, res: stalled, feed: { index: 'events', key: 'all', query: (sinceIndexed, cycle) => toEventListQuery({ ...bind, sinceIndexed }, cycle) } });
    expect(hub.stats().open).toBe(1);
    await new Promise<void>((resolve) => stalled.once('close', resolve));
    expect(hub.stats()).toEqual({ open: 0, cut: 1 });
    // It held one page at most: the catch-up waited for it rather than reading on.
    expect(stalled.writableLength).toBeLessThan(4096 + 1_000_000);
    const page = await gw.get('/v1/events?limit=5');
    expect(page.status).toBe(200);
    hub.close();
    await client.close();
  });

  it('counts open streams on /metrics', async () => {
    const stream = await liveStream('/v1/events/stream');
    const metrics = await gw.get('/metrics');
    expect(metrics.text).toMatch(/_streams_open 1\b/);
    stream.close();
  });

  it('ends every stream on shutdown, cleanly and at once (SHUTDOWN_TIMEOUT_MS is ten minutes here)', async () => {
    const stream = await liveStream('/v1/killmails/stream');
    const through = (await gw.get('/v1/ready')).body.data.indexedThrough as string;
    const secret = gw.config.cursorSecret;
    await gw.close();
    await stream.ended;
    expect(stream.error).toBeUndefined();
    // Its last id resumes where it stood: every row first held up to the live generation's instant was sent.
    expect(decodeResumeToken(stream.lastId()!, 'killmails', secret)).toEqual({ indexedAt: nanosText(through) });
    gw = undefined as unknown as TestGateway;
  });
});
