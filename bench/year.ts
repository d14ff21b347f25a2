/**
 * `npm run bench -- year [--events 10m] [--exports 3] [--seconds 60] [--no-raw]`: a year of the
 * registry. Issue 46's questions, each answered beside its bound measured in the same run:
 *
 * 1. The bundle: `--events` events (10 M: about a year at the reference export's pace of 440 k
 *    in five days) and the world they happen in at a tenth of the reference's density (one
 *    entity per 120 events instead of 12 — a year adds events far faster than systems and
 *    characters), with the reference's facts, relations and killmails per entity (the generator's).
 *    A store a tenth the size (same world, a tenth of the events) is loaded too, to compare.
 * 2. The full build of the year, by `npm run load` in its own process, while a polite client reads
 *    the small store (its latency then against idle: a full build beside serving), beside raw
 *    `_bulk` of the very documents it sent (bench/load.ts's capture and replay; `--no-raw` skips
 *    them: two more builds' time).
 * 3. Serving: the same polite mix — 20 requests a second over list pages (first, filtered, deep),
 *    killmails by involvement, `group_by`, a histogram, search and autocomplete, the response
 *    cache off — on the year and on the small store, idle.
 * 4. `--exports` hourly exports at the registry's pace (3,668 new events on top and 2 late
 *    arrivals, 46 new killmails, 0.5 % of entities changed and moved to the top, 0.02 % removed),
 *    each published to the object store (moto) and taken in by a follower checking every second.
 *    For each: publication (the pointer's write) → served by the gateway; the loader's own
 *    seconds; the read bound (the loader's reader over the files that changed, from the store:
 *    download, gunzip, sha256, split into lines); Elasticsearch's CPU over the update (less what
 *    the polite client cost it meanwhile, at its idle rate) beside what indexing only the written
 *    rows costs at the full build's rate; the loader's peak RSS; the polite client's latency during
 *    the update against just before; the first `group_by` and histogram after the swap against
 *    warm ones.
 * 5. A stream (`/v1/events/stream`) and a `since_indexed` walk over every export: each new row of
 *    their filter exactly once (expected from the files). The gateway's RSS idle and at the end.
 *
 * Everything it made — generations, bundles, the store — is deleted at the end.
 */
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGunzip, gzipSync } from 'node:zlib';
import type { Client } from '@elastic/elasticsearch';
import { encodeLine, encodePretty } from '../generator/go-json.ts';
import { writeNextExport } from '../generator/next-export.ts';
import { publishBundle } from '../generator/publish.ts';
import { type BundleRow, type Manifest, readJson, readManifest, readRows } from '../generator/read-bundle.ts';
import { writeJsonDocument } from '../generator/row-file.ts';
import { ensureBundle } from '../generator/write-bundle.ts';
import { openBundle } from '../loader/bundle.ts';
import { deleteAllGenerations } from '../loader/generations.ts';
import { readChunks } from '../loader/read-lines.ts';
import { spawnFollower } from '../harness/loader-process.ts';
import { spawnGateway } from '../harness/gateway-process.ts';
import { NODE_ARGS } from '../harness/listener.ts';
import { type MotoServer, startMoto } from '../harness/moto.ts';
import { cpuSeconds, vmMb } from '../harness/proc.ts';
import { openSse } from '../harness/sse.ts';
import type { Config } from '../src/config.ts';
import { INDICES } from '../src/indices/all.ts';
import { type GenerationDoc, META_INDEX, aliasName } from '../src/indices/generation.ts';
import { type Captured, capture, replay, runLoader } from './load.ts';
import { type Sample, startPolite, windowFigures } from './polite.ts';
import { type Log, esCpuMillis, round } from './support.ts';

const PREFIX = 'bench-year';
const SMALL_PREFIX = 'bench-year-small';
const SOURCE = 's3://registry/year';
/** The reference export: 440,118 events and 5,480 killmails in five days (export-format.md). */
const EVENTS_PER_HOUR = Math.round(440_118 / 120);
const KILLMAILS_PER_HOUR = Math.round(5_480 / 120);
/** One entity per this many events (the reference has 12: a year adds events faster than entities). */
const EVENTS_PER_ENTITY = 120;
const POLITE_RATE = 20;
/** A polite client's first seconds, left out of idle figures: the first asks of each route fill caches. */
const WARM_UP_MS = 10_000;

type Window = Record<string, { p50: number; p99: number; count: number; errors: number }>;

export interface ExportFigures {
  newEvents: number;
  /** Pointer written → the gateway serves the new generation. */
  publishToServedSeconds: number;
  /** The follower's load, as it logged it. */
  loadSeconds: number;
  /** The loader's reader over the changed files, from the store. */
  readBoundSeconds: number;
  /** loadSeconds / readBoundSeconds (goal ≤ 1.5). */
  readBoundRatio: number;
  /** Elasticsearch's CPU from the publication to the swap (the update's own), less the polite client's. */
  esCpuSeconds: number;
  /** …and from the swap to served: the gateway's warm-up of the new generation (WARM_REQUESTS). */
  warmEsCpuSeconds: number;
  /** Pointer written → the alias swapped. */
  publishToLiveSeconds: number;
  /** The rows written, at the full build's ES CPU per row. */
  esCpuIndexingSeconds: number;
  /** esCpuSeconds / esCpuIndexingSeconds (goal ≤ 2). */
  esCpuRatio: number;
  written: number;
  loaderPeakRssMb: number;
  /** CPU seconds each process used from the publication to the swap (the object store stands in for a remote one). */
  cpuDuringUpdate: Record<string, number>;
  idle: Window;
  duringUpdate: Window;
  /** p99 during the update / idle, list pages together (goal ≤ 1.5). */
  listP99Ratio: number;
  /** The first answer after the swap / a warm one, ms (goal ≤ 2×). */
  firstFacet: Record<string, { firstMs: number; warmMs: number; ratio: number }>;
}

export interface YearBenchResult {
  bundle: { events: number; entities: number; rows: number; jsonlMb: number; storedMb: number };
  fullBuild: { seconds: number; rows: number; rowsPerSecond: number; esCpuSeconds: number; peakRssMb: number; raw?: { seconds: number; docsPerSecond: number; ratio: number } };
  /** The small store's polite client idle and during the year's full build (goal: list p99 ≤ 3× idle). */
  servingDuringBuild: { idle: Window; duringBuild: Window; listP99Ratio: number };
  /** The same mix idle on the year and on the small store (goal: each route's p99 ≤ 1.3×). */
  scale: { small: Window; year: Window; p99Ratio: Record<string, number> };
  exports: ExportFigures[];
  stream: { expected: number; received: number; missing: number; twice: number };
  walk: { expected: number; received: number; missing: number; twice: number };
  gatewayRssMb: { idle: number; end: number; delta: number };
}

const LIST_ROUTES = ['events', 'filtered', 'deep', 'killmails'];

/** p99 of the list routes together, over the p99 of the same routes in `base`. */
function listRatio(samples: (Sample & { name: string })[], window: [number, number], base: [number, number]): number {
  const p99 = (from: number, to: number) => {
    const ms = samples.filter((s) => LIST_ROUTES.includes(s.name) && s.at >= from && s.at < to && s.status === 200).map((s) => s.ms).sort((a, b) => a - b);
    return ms[Math.min(ms.length - 1, Math.floor(0.99 * ms.length))] ?? 0;
  };
  return round(p99(...window) / Math.max(0.1, p99(...base)));
}

const vm = async (pid: number, field: 'VmHWM' | 'VmRSS') => round(await vmMb(pid, field), 0);

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return (await response.json()) as T;
}

/** The polite mix on a store: paths named by route, a deep page's cursor read from the store. */
async function politePaths(url: string): Promise<Record<string, string>> {
  const first = await getJson<{ data: BundleRow[]; nextCursor?: string }>(`${url}/v1/events?limit=20`);
  const kind = first.data[0]!.kind as string;
  let cursor = first.nextCursor;
  for (let page = 0; page < 50 && cursor; page++) cursor = (await getJson<{ nextCursor?: string }>(`${url}/v1/events?limit=20&cursor=${encodeURIComponent(cursor)}`)).nextCursor;
  const killmail = (await getJson<{ data: BundleRow[] }>(`${url}/v1/killmails?limit=1&cycles=all`)).data[0]!;
  const character = (await getJson<{ data: BundleRow[] }>(`${url}/v1/characters?limit=1`)).data[0]!;
  const name = String(character.name ?? character.displayName ?? 'a').split(' ')[0]!;
  return {
    events: '/v1/events?limit=20',
    filtered: `/v1/events?limit=20&kind=${encodeURIComponent(kind)}`,
    deep: `/v1/events?limit=20&cursor=${encodeURIComponent(cursor ?? '')}`,
    killmails: `/v1/killmails?limit=20&cycles=all&involved=${encodeURIComponent(String(killmail.victimCharacterId ?? killmail.killerCharacterId ?? character.id))}`,
    groupBy: '/v1/events?group_by=kind',
    histogram: '/v1/events?group_by=occurredAt:day',
    search: `/v1/search?q=${encodeURIComponent(name)}&limit=10`,
    autocomplete: `/v1/autocomplete?q=${encodeURIComponent(name.slice(0, 3))}`,
  };
}

/**
 * The registry's next hourly export of `from`: events — new rows on top and late arrivals at the
 * end — written as a gzip of three members (the new rows, the previous file's own compressed
 * bytes, the late ones: the export's bytes are what they would be, without compressing 10 M rows
 * again), entities changed and removed, new killmails; manifest and catalog to match.
 */
async function nextExport(from: string, to: string, hour: number, log: Log): Promise<{ newIds: string[] }> {
  const manifest = await readManifest(from);
  const at = new Date(Date.parse(manifest.generatedAt) + 3_600_000);
  const iso = (ms: number) => new Date(ms).toISOString();
  const entitiesOf = manifest.files.find((f) => f.path === 'entities.jsonl')!.rowCount;
  const changeEvery = Math.max(2, Math.round(1 / 0.005));
  const removeEvery = Math.max(changeEvery + 1, Math.round(1 / 0.0002));
  await writeNextExport(from, to, {
    entities: async function* (rows) {
      const kept: BundleRow[] = [];
      const changed: BundleRow[] = [];
      let i = 0;
      for await (const row of rows) {
        i += 1;
        if (i % removeEvery === 0) continue;
        if (i % changeEvery === 0) changed.push({ ...row, updatedAt: iso(at.getTime() - changed.length * 1000) });
        else kept.push(row);
      }
      yield* changed;
      yield* kept;
    },
    killmails: async function* (rows) {
      let first = true;
      for await (const row of rows) {
        if (first) for (let k = KILLMAILS_PER_HOUR; k > 0; k--) yield { ...row, id: `${row.id}:h${hour}-${k}`, occurredAt: iso(at.getTime() - (KILLMAILS_PER_HOUR - k) * 60_000) };
        first = false;
        yield row;
      }
    },
  }, 3_600_000);
  // Events: rows for the top from the file's first rows, rows for the end from its last.
  const top: BundleRow[] = [];
  for await (const { row } of readRows(from, 'events.jsonl')) {
    top.push(row);
    if (top.length === EVENTS_PER_HOUR) break;
  }
  const newest = Date.parse(top[0]!.occurredAt);
  const head: BundleRow[] = top.map((row, k) => ({ ...row, id: `${row.id}:h${hour}`, occurredAt: iso(Math.max(newest + 1000, at.getTime() - 3_600_000) + (EVENTS_PER_HOUR - k) * 900) }));
  const mark = manifest.highWaterMarks.events!;
  const oldest = Date.parse(String(mark.lastTime));
  const tail: BundleRow[] = [0, 1].map((k) => ({ ...top[k]!, id: `${top[k]!.id}:h${hour}-late`, occurredAt: iso(oldest - 86_400_000 - k * 1000) }));
  const bytes = (rows: BundleRow[]) => Buffer.from(rows.map((row) => encodeLine(row)).join(''));
  const [headBytes, tailBytes] = [bytes(head), bytes(tail)];
  const entry = manifest.files.find((f) => f.path === 'events.jsonl')!;
  const sha = createHash('sha256').update(headBytes);
  await pipeline(createReadStream(path.join(from, 'events.jsonl.gz')), createGunzip(), async function* (chunks: AsyncIterable<Buffer>) {
    for await (const chunk of chunks) sha.update(chunk);
  });
  sha.update(tailBytes);
  const out = path.join(to, 'events.jsonl.gz');
  await writeFile(out, gzipSync(headBytes));
  await pipeline(createReadStream(path.join(from, 'events.jsonl.gz')), createWriteStream(out, { flags: 'a' }));
  await writeFile(out, gzipSync(tailBytes), { flag: 'a' });
  const next = await readManifest(to);
  const events = { ...entry, sha256: sha.digest('hex'), sizeBytes: entry.sizeBytes + headBytes.length + tailBytes.length, rowCount: entry.rowCount + head.length + tail.length };
  const catalog = { ...(await readJson(to, 'catalog.json')), eventCount: events.rowCount };
  const catalogEntry = await writeJsonDocument(to, 'catalog.json', catalog);
  const files = next.files.map((f) => (f.path === 'events.jsonl' ? events : f.path === 'catalog.json' ? catalogEntry : f));
  const highWaterMarks = { ...next.highWaterMarks, events: { ...mark, rowCount: events.rowCount, firstId: head[0]!.id, firstTime: head[0]!.occurredAt, lastId: tail.at(-1)!.id, lastTime: tail.at(-1)!.occurredAt } };
  await writeFile(path.join(to, 'manifest.json'), encodePretty({ ...next, files, highWaterMarks } satisfies Manifest));
  log(`  export ${hour}: ${head.length + tail.length} new events, ${KILLMAILS_PER_HOUR} killmails, entities ~${Math.round(entitiesOf / changeEvery)} changed and ~${Math.round(entitiesOf / removeEvery)} removed`);
  return { newIds: [...head, ...tail].filter((row) => row.environment === 'stillness').map((row) => row.id) };
}

/** The loader's own reader over these files of a published bundle, one after the other, from the store. */
async function readBound(moto: MotoServer, files: string[]): Promise<number> {
  const bundle = await openBundle(SOURCE, { store: moto.store() });
  const started = performance.now();
  for (const name of files) {
    const stream = readChunks(bundle.files.get(name)!);
    for await (const _ of stream.chunks);
    stream.integrity();
  }
  return round((performance.now() - started) / 1000);
}

function startFollower(esUrl: string, config: Readonly<Config>, moto: MotoServer, lines: string[]): ChildProcess {
  const env = { ...moto.env, ES_URL: esUrl, INDEX_PREFIX: PREFIX, DATA_DIR: path.join(config.cacheDir, 'bench-data') };
  return spawnFollower(SOURCE, env, { nodeArgs: NODE_ARGS, onLine: (line) => lines.push(line) });
}

async function servedGeneration(url: string): Promise<string | undefined> {
  return (await getJson<{ data: { generation: string | null } }>(`${url}/v1/ready`).catch(() => undefined))?.data.generation ?? undefined;
}

export async function benchYear(options: { client: Client; esUrl: string; config: Readonly<Config>; events: number; exports: number; seconds: number; raw: boolean; log: Log }): Promise<YearBenchResult> {
  const { client, esUrl, config, events, exports, seconds, raw, log } = options;
  const scale = Math.max(2, Math.round(events / EVENTS_PER_ENTITY / 100));
  const perEntity = Math.round(events / (scale * 100));
  const work = await mkdtemp(path.join(config.cacheDir, 'bench-year-'));
  const dir = await ensureBundle(path.join(work, 'year'), { scale, eventsPerEntity: perEntity }, log);
  const small = await ensureBundle(path.join(work, 'small'), { scale, eventsPerEntity: Math.max(1, Math.round(perEntity / 10)) }, log);
  const manifest = await readManifest(dir);
  const jsonl = manifest.files.reduce((n, f) => n + f.sizeBytes, 0);
  const rows = manifest.files.filter((f) => f.path.endsWith('.jsonl')).reduce((n, f) => n + f.rowCount, 0);
  let storedBytes = 0;
  for (const f of manifest.files) storedBytes += (await stat(path.join(dir, f.path)).catch(() => stat(path.join(dir, `${f.path}.gz`)))).size;
  const eventCount = manifest.files.find((f) => f.path === 'events.jsonl')!.rowCount;
  log(`year: ${eventCount} events, ${manifest.files.find((f) => f.path === 'entities.jsonl')!.rowCount} entities, ${rows} rows, ${Math.round(jsonl / 2 ** 20)} MB of JSONL`);
  await deleteAllGenerations(client, PREFIX);
  await deleteAllGenerations(client, SMALL_PREFIX);
  const moto = await startMoto();
  const gateways: { stop(): Promise<void> }[] = [];
  let follower: ChildProcess | undefined;
  try {
    log('the small store (a tenth of the events) ...');
    await runLoader(small, esUrl, config, SMALL_PREFIX, true);
    const smallGw = await spawnGateway({ ES_URL: esUrl, INDEX_PREFIX: SMALL_PREFIX, RESPONSE_CACHE: 'off' });
    gateways.push(smallGw);
    const smallPaths = await politePaths(smallGw.url);

    // The full build, beside serving the small store.
    let captured: { generation: string; bodies: Captured[] } | undefined;
    if (raw) {
      log('capturing the bulk bodies of a full build (untimed) ...');
      captured = await capture(client, dir, path.join(work, 'bulk'), config, log);
    }
    const politeSmall = startPolite(smallGw.url, smallPaths, POLITE_RATE);
    // The first asks of each route fill the caches: not idle figures.
    await sleep(WARM_UP_MS + seconds * 1000);
    const buildStart = Date.now();
    log('the full build, by `npm run load` in its own process ...');
    const cpuBefore = await esCpuMillis(esUrl);
    const built = await runLoader(dir, esUrl, config, PREFIX, true);
    const buildCpu = ((await esCpuMillis(esUrl)) - cpuBefore) / 1000;
    const buildEnd = Date.now();
    const smallSamples = await politeSmall.stop();
    log(`  ${built.rows} rows in ${round(built.seconds)} s, ES CPU ${round(buildCpu)} s, peak RSS ${built.peakRssMb} MB`);
    let rawFigure: YearBenchResult['fullBuild']['raw'];
    if (captured) {
      log('raw _bulk of the same documents ...');
      // The loader's order (largest file first), as bench/load.ts replays it.
      const nameOf = (file: string) => INDICES.find((d) => d.files.some((stem) => file === `${stem}.jsonl`))!.name;
      const order = [...new Set([...built.files.toSorted((a, b) => (a.startedAt ?? 0) - (b.startedAt ?? 0)).map((f) => nameOf(f.file)), ...INDICES.map((d) => d.name)])];
      const replayed = await replay(client, esUrl, captured.generation, captured.bodies, order);
      const rawSeconds = [...replayed.seconds.values()].reduce((a, b) => a + b, 0) + replayed.finishSeconds;
      const docs = captured.bodies.reduce((n, b) => n + b.docs, 0);
      rawFigure = { seconds: round(rawSeconds), docsPerSecond: Math.round(docs / rawSeconds), ratio: round(built.rows / built.seconds / (docs / rawSeconds)) };
      await deleteAllGenerations(client, 'bench-raw');
      await rm(path.join(work, 'bulk'), { recursive: true, force: true });
    }
    const servingDuringBuild = {
      idle: windowFigures(smallSamples, buildStart - seconds * 1000, buildStart),
      duringBuild: windowFigures(smallSamples, buildStart, buildEnd),
      listP99Ratio: listRatio(smallSamples, [buildStart, buildEnd], [buildStart - seconds * 1000, buildStart]),
    };

    // Serving the year beside the small store, idle.
    const gw = await spawnGateway({ ES_URL: esUrl, INDEX_PREFIX: PREFIX, RESPONSE_CACHE: 'off' });
    gateways.push(gw);
    const paths = await politePaths(gw.url);
    const smallIdle = startPolite(smallGw.url, smallPaths, POLITE_RATE);
    const smallFrom = Date.now() + WARM_UP_MS;
    await sleep(WARM_UP_MS + seconds * 1000);
    const smallWindow = windowFigures(await smallIdle.stop(), smallFrom, Infinity);
    const polite = startPolite(gw.url, paths, POLITE_RATE);
    await sleep(WARM_UP_MS);
    const yearIdleFrom = Date.now();
    await sleep(seconds * 1000);
    const yearIdleTo = Date.now();
    const gatewayIdleRss = await vm(gw.pid, 'VmRSS');

    // Exports: published to the store, taken in by a follower; a stream and a walk watch.
    await moto.createBucket('registry');
    await publishBundle(dir, SOURCE, { store: moto.store() });
    const lines: string[] = [];
    follower = startFollower(esUrl, config, moto, lines);
    while (!lines.some((l) => /: live: /.test(l) || / live$/.test(l))) {
      if (lines.some((l) => /: failed: /.test(l))) throw new Error(`the follower failed: ${lines.at(-1)}`);
      await sleep(200);
    }
    const ready = await getJson<{ data: { indexedThrough: string } }>(`${gw.url}/v1/ready`);
    const stream = await openSse(`${gw.url}/v1/events/stream?cycles=all&environment=stillness`);
    const walked: string[] = [];
    let through = ready.data.indexedThrough;
    let walking = true;
    const walker = (async () => {
      while (walking) {
        let cursor: string | undefined;
        do {
          const page = await getJson<{ data: { id: string }[]; nextCursor?: string; meta: { indexedThrough?: string } }>(
            `${gw.url}/v1/events?sort=indexedAt:asc&cycles=all&environment=stillness&limit=1000&since_indexed=${encodeURIComponent(through)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          );
          walked.push(...page.data.map((r) => r.id));
          cursor = page.nextCursor;
          if (!cursor && page.meta.indexedThrough) through = page.meta.indexedThrough;
        } while (cursor);
        await sleep(1000);
      }
    })();
    const cpuPerRow = buildCpu / built.rows;
    const othersCpu = async (): Promise<Record<string, number>> => {
      const bench = process.cpuUsage();
      return { loader: await cpuSeconds(follower!.pid!), store: await cpuSeconds(moto.pid), gateway: await cpuSeconds(gw.pid), bench: (bench.user + bench.system) / 1e6 };
    };
    // What the polite client costs Elasticsearch idle, per second, to leave out of an update's figure.
    const idleCpuStart = await esCpuMillis(esUrl);
    await sleep(10_000);
    const politeCpuPerSecond = ((await esCpuMillis(esUrl)) - idleCpuStart) / 10_000;
    const figures: ExportFigures[] = [];
    const expectedNew: string[] = [];
    let previous = dir;
    for (let hour = 1; hour <= exports; hour++) {
      const next = path.join(work, `export-${hour}`);
      const { newIds } = await nextExport(previous, next, hour, log);
      expectedNew.push(...newIds);
      // The bundle's files go up first; the pointer, written last, is the publication.
      const before = await servedGeneration(gw.url);
      await sleep(seconds * 500);
      const quietFrom = Date.now() - seconds * 500;
      await writeFile(`/proc/${follower.pid}/clear_refs`, '5');
      const logged = lines.length;
      const cpu0 = await esCpuMillis(esUrl);
      const others0 = await othersCpu();
      const published = await publishBundle(next, SOURCE, { store: moto.store() });
      const publishedAt = Date.now();
      const t0 = performance.now();
      let servedAt = 0;
      let liveAt = 0;
      let cpuLive = 0;
      for (;;) {
        if (!liveAt) {
          const live = (await client.search<GenerationDoc>({ index: aliasName(PREFIX, META_INDEX), size: 1 })).hits.hits[0]?._source;
          if (live?.manifestSha256 === published.manifestSha256) {
            liveAt = Date.now();
            cpuLive = await esCpuMillis(esUrl);
          }
        }
        const served = await servedGeneration(gw.url);
        if (liveAt && served && served !== before) {
          servedAt = Date.now();
          break;
        }
        if (lines.slice(logged).some((l) => /: failed: /.test(l))) throw new Error(`the follower failed: ${lines.at(-1)}`);
        await sleep(25);
      }
      const publishToServedSeconds = round((performance.now() - t0) / 1000);
      // The update's own: to the swap (the gateways' warm-up of the new generation comes after it).
      const cpu = (cpuLive - cpu0) / 1000 - (politeCpuPerSecond * (liveAt - publishedAt)) / 1000;
      const warmCpu = ((await esCpuMillis(esUrl)) - cpuLive) / 1000 - (politeCpuPerSecond * (Date.now() - liveAt)) / 1000;
      const others = await othersCpu();
      const peak = await vm(follower.pid!, 'VmHWM');
      while (!lines.slice(logged).some((l) => /: loaded: /.test(l))) await sleep(50);
      const own = lines.slice(logged);
      for (const line of own) if (!/rows, \d+ rows\/s, RSS/.test(line)) log(`    follower: ${line}`);
      const loadSeconds = Number(/: loaded: .*\(([\d.]+) s[:)]/.exec(own.find((l) => /: loaded: /.test(l))!)![1]);
      const changed = own.flatMap((l) => /^\s+(\S+\.jsonl): \d+ rows in/.exec(l)?.[1] ?? []);
      const written = own.reduce((n, l) => n + Number(/updated: (\d+) written/.exec(l)?.[1] ?? /(\d+) rows in [\d.]+ s \(built\)/.exec(l)?.[1] ?? 0), 0);
      await sleep(2000);
      const samples = await polite.snapshot();
      // Who had the cores meanwhile, and when the slowest answers came: what a p99 during the update is made of.
      const cpuDuringUpdate = Object.fromEntries([...Object.entries(others).map(([name, seconds]) => [name, round(seconds - others0[name]!)]), ['elasticsearch', round((cpuLive - cpu0) / 1000)]]);
      const slowest = samples.filter((s) => s.at >= publishedAt && s.at < servedAt).toSorted((a, b) => b.ms - a.ms).slice(0, 8);
      log(`  export ${hour}: CPU s during the update ${JSON.stringify(cpuDuringUpdate)}; slowest answers ${slowest.map((s) => `${s.name} ${round(s.ms, 0)} ms at +${round((s.at - publishedAt) / 1000, 1)} s`).join(', ')}`);
      const firstFacet: ExportFigures['firstFacet'] = {};
      for (const name of ['groupBy', 'histogram']) {
        const after = samples.filter((s) => s.name === name && s.at >= servedAt && s.status === 200);
        const warm = samples.filter((s) => s.name === name && s.at >= quietFrom && s.at < publishedAt && s.status === 200).map((s) => s.ms).sort((a, b) => a - b);
        const warmMs = round(warm[Math.floor(warm.length / 2)] ?? 0, 1);
        firstFacet[name] = { firstMs: round(after[0]?.ms ?? 0, 1), warmMs, ratio: round((after[0]?.ms ?? 0) / Math.max(0.1, warmMs)) };
      }
      const readBoundSeconds = await readBound(moto, changed);
      figures.push({
        newEvents: newIds.length,
        publishToServedSeconds,
        loadSeconds,
        readBoundSeconds,
        readBoundRatio: round(loadSeconds / readBoundSeconds),
        esCpuSeconds: round(cpu),
        warmEsCpuSeconds: round(warmCpu),
        publishToLiveSeconds: round((liveAt - publishedAt) / 1000),
        esCpuIndexingSeconds: round(written * cpuPerRow),
        esCpuRatio: round(cpu / (written * cpuPerRow)),
        written,
        loaderPeakRssMb: peak,
        cpuDuringUpdate,
        idle: windowFigures(samples, quietFrom, publishedAt),
        duringUpdate: windowFigures(samples, publishedAt, servedAt),
        listP99Ratio: listRatio(samples, [publishedAt, servedAt], [quietFrom, publishedAt]),
        firstFacet,
      });
      log(`  export ${hour}: served ${publishToServedSeconds} s after publication (load ${loadSeconds} s, read bound ${readBoundSeconds} s), ES CPU ${round(cpu)} s for ${written} rows written, loader peak RSS ${peak} MB`);
      // This generation's deep page from now on (a cursor is bound to its generation).
      polite.setPaths({ ...paths, deep: (await politePaths(gw.url)).deep! });
      previous = next;
    }
    await sleep(3000);
    walking = false;
    await walker;
    const yearSamples = await polite.stop();
    const streamed = stream.rows().map((r: { id: string }) => r.id);
    stream.close();
    const check = (received: string[]) => ({
      expected: expectedNew.length,
      received: received.length,
      missing: expectedNew.filter((id) => !received.includes(id)).length,
      twice: received.length - new Set(received).size,
    });
    const yearWindow = windowFigures(yearSamples, yearIdleFrom, yearIdleTo);
    const end = await vm(gw.pid, 'VmRSS');
    return {
      bundle: { events: eventCount, entities: manifest.files.find((f) => f.path === 'entities.jsonl')!.rowCount, rows, jsonlMb: Math.round(jsonl / 2 ** 20), storedMb: Math.round(storedBytes / 2 ** 20) },
      fullBuild: { seconds: round(built.seconds), rows: built.rows, rowsPerSecond: Math.round(built.rows / built.seconds), esCpuSeconds: round(buildCpu), peakRssMb: built.peakRssMb, ...(rawFigure ? { raw: rawFigure } : {}) },
      servingDuringBuild,
      scale: {
        small: smallWindow,
        year: yearWindow,
        p99Ratio: Object.fromEntries(Object.keys(yearWindow).map((name) => [name, round(yearWindow[name]!.p99 / Math.max(0.1, smallWindow[name]?.p99 ?? 0.1))])),
      },
      exports: figures,
      stream: check(streamed),
      walk: check(walked),
      gatewayRssMb: { idle: gatewayIdleRss, end, delta: end - gatewayIdleRss },
    };
  } finally {
    follower?.kill('SIGTERM');
    for (const gateway of gateways) await gateway.stop();
    await moto.stop();
    await deleteAllGenerations(client, PREFIX);
    await deleteAllGenerations(client, SMALL_PREFIX);
    await rm(work, { recursive: true, force: true });
  }
}
