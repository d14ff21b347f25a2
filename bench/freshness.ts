/**
 * The freshness loop's figures (part of `npm run bench -- load`), each a ratio taken in one run
 * on one bundle, every load by `npm run load` in a process of its own:
 *
 * 1. full load with nothing live (no first-seen instants to carry) — the reference;
 * 2. the same bundle forced over the live one: every event and killmail looks up the first-seen
 *    instant the live generation holds for it (goal: ≤ 1.3× the reference);
 * 3. the registry's next export where only `events.jsonl` changed (0.75 % new rows on top, one
 *    late arrival): every other index reused, events updated (goal: ≤ 0.3× the reference);
 * 4. a bundle of other data (another seed, same scale: nearly every row changed) over the next
 *    export, as the planner decides, against the same bundle forced (built) over the same live
 *    generation — rolled back to between the two (goal: ≤ 1.05×: where reuse would not pay, the
 *    plan builds; the update path was measured at 1.7×);
 * 5. a full load from the object store (moto on loopback, SigV4 checked, the registry's pointer
 *    layout) against the full load from a directory;
 * 6. the follow lag: a follower (`npm run load -- --follow`, checking every second) on that store;
 *    the next export is published, and the time from the pointer's write to the new generation
 *    live is measured (a check's wait, the incremental load and the swap).
 */
import path from 'node:path';
import { setTimeout } from 'node:timers/promises';
import type { Client } from '@elastic/elasticsearch';
import { writeNextExport } from '../generator/next-export.ts';
import { type BundleRow, readManifest, readRows } from '../generator/read-bundle.ts';
import { ensureBundle } from '../generator/write-bundle.ts';
import { deleteAllGenerations } from '../loader/generations.ts';
import { rollback } from '../loader/rollback.ts';
import type { LoadSummary } from '../loader/load-bundle.ts';
import { publishBundle } from '../generator/publish.ts';
import { spawnFollower } from '../harness/loader-process.ts';
import { NODE_ARGS } from '../harness/listener.ts';
import { type MotoServer, startMoto } from '../harness/moto.ts';
import type { Config } from '../src/config.ts';
import { type GenerationDoc, META_INDEX, aliasName } from '../src/indices/generation.ts';
import { runLoader } from './load.ts';
import { type Log, round } from './support.ts';

const PREFIX = 'bench-fresh';
const STORE_PREFIX = 'bench-fresh-store';
/** New events in the next export, as a share of the file. */
const NEW_SHARE = 0.0075;

export interface LoadFigure {
  seconds: number;
  rows: number;
  peakRssMb: number;
  /** What was done with each index (`events: update`, `entities: reuse`). */
  actions: Record<string, string>;
}

export interface FreshnessBenchResult {
  bundle: { scale: number; events: number; newEvents: number };
  full: LoadFigure;
  fullCarrying: LoadFigure;
  incremental: LoadFigure;
  /** A bundle of other data over the next export, as planned, and the same bundle forced over it. */
  otherData: LoadFigure;
  otherDataForced: LoadFigure;
  /** The same full load from the object store. */
  fullFromStore: LoadFigure;
  /** fullCarrying / full (goal ≤ 1.3). */
  carryRatio: number;
  /** incremental / full (goal ≤ 0.3). */
  incrementalRatio: number;
  /** otherData / otherDataForced (goal ≤ 1.05). */
  otherDataRatio: number;
  /** fullFromStore / full. */
  storeRatio: number;
  /** Seconds from the next export's pointer written to its generation live, with a follower checking every second. */
  followLagSeconds: number;
}

function figure(summary: LoadSummary & { peakRssMb: number }): LoadFigure {
  return {
    seconds: round(summary.seconds),
    rows: summary.rows,
    peakRssMb: summary.peakRssMb,
    actions: Object.fromEntries(summary.indices.map((r) => [r.name, r.action])),
  };
}

/** The next export's events: `count` new rows on top (newer than any), the file as it was, one late arrival (older than any). */
function withNewEvents(dir: string, count: number) {
  return async function* (rows: AsyncIterable<BundleRow>): AsyncGenerator<BundleRow> {
    const top: BundleRow[] = [];
    let oldest: BundleRow | undefined;
    for await (const { row } of readRows(dir, 'events.jsonl')) {
      if (top.length < count) top.push(row);
      oldest = row;
    }
    const newest = Date.parse(top[0]!.occurredAt);
    for (let i = count; i > 0; i -= 1) yield { ...top[i - 1]!, id: `${top[i - 1]!.id}:next`, occurredAt: new Date(newest + i * 1000).toISOString() };
    yield* rows;
    yield { ...oldest!, id: `${oldest!.id}:late`, occurredAt: new Date(Date.parse(oldest!.occurredAt) - 86_400_000).toISOString() };
  };
}

export async function benchFreshness(options: { client: Client; esUrl: string; config: Readonly<Config>; scale: number; log: Log }): Promise<FreshnessBenchResult> {
  const { client, esUrl, config, scale, log } = options;
  const dir = await ensureBundle(path.join(config.cacheDir, `bench-bundle-scale-${scale}`), { scale }, log);
  const events = (await readManifest(dir)).files.find((f) => f.path === 'events.jsonl')!.rowCount;
  const newEvents = Math.round(events * NEW_SHARE);
  const next = path.join(config.cacheDir, `bench-bundle-scale-${scale}-next`);
  log(`next export: ${newEvents} new events on top of ${events}, one late arrival`);
  await writeNextExport(dir, next, { events: withNewEvents(dir, newEvents) });

  await deleteAllGenerations(client, PREFIX);
  await deleteAllGenerations(client, STORE_PREFIX);
  const moto = await startMoto();
  try {
    log('full load, nothing live ...');
    const full = figure(await runLoader(dir, esUrl, config, PREFIX, true));
    log(`  ${full.seconds} s; the same bundle forced over it (first-seen instants carried) ...`);
    const fullCarrying = figure(await runLoader(dir, esUrl, config, PREFIX, true));
    log(`  ${fullCarrying.seconds} s; the next export (only events changed) ...`);
    const incremental = figure(await runLoader(next, esUrl, config, PREFIX, false));
    log(`  ${incremental.seconds} s (${Object.entries(incremental.actions).map(([k, v]) => `${k}: ${v}`).join(', ')}); a bundle of other data ...`);
    const other = await ensureBundle(path.join(config.cacheDir, `bench-bundle-scale-${scale}-seed-2`), { scale, seed: 2 }, log);
    const otherData = figure(await runLoader(other, esUrl, config, PREFIX, false));
    log(`  ${otherData.seconds} s (${Object.entries(otherData.actions).map(([k, v]) => `${k}: ${v}`).join(', ')}); back to the next export, the same bundle forced ...`);
    await rollback(client, PREFIX);
    const otherDataForced = figure(await runLoader(other, esUrl, config, PREFIX, true));
    log(`  ${otherDataForced.seconds} s; the object store ...`);

    await moto.createBucket('registry');
    await publishBundle(dir, 's3://registry/current', { store: moto.store() });
    const fullFromStore = figure(await runLoader('s3://registry/current', esUrl, config, STORE_PREFIX, true, moto.env));
    log(`  from the store: ${fullFromStore.seconds} s; following it, the next export published ...`);
    const followLagSeconds = await followLag(client, esUrl, config, moto, next, log);
    log(`  follow lag: ${followLagSeconds} s`);
    return {
      bundle: { scale, events, newEvents },
      full,
      fullCarrying,
      incremental,
      otherData,
      otherDataForced,
      fullFromStore,
      carryRatio: round(fullCarrying.seconds / full.seconds),
      incrementalRatio: round(incremental.seconds / full.seconds),
      otherDataRatio: round(otherData.seconds / otherDataForced.seconds),
      storeRatio: round(fullFromStore.seconds / full.seconds),
      followLagSeconds,
    };
  } finally {
    await moto.stop();
    await deleteAllGenerations(client, PREFIX);
    await deleteAllGenerations(client, STORE_PREFIX);
  }
}

/** A follower on the store (its bundle live), the next export published: seconds from its pointer written to it live. */
async function followLag(client: Client, esUrl: string, config: Readonly<Config>, moto: MotoServer, next: string, log: Log): Promise<number> {
  const lines: string[] = [];
  const env = { ...moto.env, ES_URL: esUrl, INDEX_PREFIX: STORE_PREFIX, DATA_DIR: path.join(config.cacheDir, 'bench-data') };
  const follower = spawnFollower('s3://registry/current', env, { nodeArgs: NODE_ARGS, onLine: (line) => lines.push(line) });
  try {
    // Its first check finds the live bundle; then the registry publishes the next one.
    while (!lines.some((l) => / live$/.test(l))) await setTimeout(200);
    const published = await publishBundle(next, 's3://registry/current', { store: moto.store() });
    const written = performance.now();
    for (;;) {
      const live = (await client.search<GenerationDoc>({ index: aliasName(STORE_PREFIX, META_INDEX), size: 1 })).hits.hits[0]?._source;
      if (live?.manifestSha256 === published.manifestSha256) return round((performance.now() - written) / 1000);
      if (lines.some((l) => /: failed: /.test(l))) throw new Error(`the follower failed: ${lines.at(-1)}`);
      await setTimeout(50);
    }
  } finally {
    const exited = new Promise((resolve) => follower.once('exit', resolve));
    follower.kill('SIGTERM');
    await exited;
    log(`  follower: ${lines.filter((l) => l.startsWith('check ')).length} checks`);
  }
}
