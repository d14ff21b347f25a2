/**
 * Scale benchmark: `/v1/events` on bundles whose events file holds 1 M and 10 M rows (sizes
 * are options). For each size: a fresh load (rows/s, the loader's peak RSS), then under 10
 * connections the first page, a page deep in the list (a cursor reached by walking the API
 * past the first 500 k rows, or half the list when it is shorter) and the `kind` filter
 * (rotating over every kind). Deep page over first page, and the kind filter's p99 at the
 * largest size over the smallest, are what index sorting and `search_after` must keep flat.
 * Latencies are taken once the cluster has no merge running (steady state), in interleaved
 * rounds, and averaged.
 */
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { ensureBundle } from '../generator/write-bundle.ts';
import { liveGeneration } from '../loader/generations.ts';
import type { Config } from '../src/config.ts';
import { indexName } from '../src/indices/generation.ts';
import { runLoader } from './load.ts';
import { type Gateway, type LoadFigures, type Log, drive, mean, round, spawnGateway } from './support.ts';

/** Entities of the scale bundles; events per entity makes up the size. */
const SCALE = 20;
const DEEP_ROWS = 500_000;
const WALK_LIMIT = 200;
const LIMIT = 50;

export interface SizeFigures {
  events: number;
  load: { seconds: number; rowsPerSecond: number; peakRssMb: number };
  deepOffset: number;
  firstPage: LoadFigures;
  deepPage: LoadFigures;
  kindFilter: LoadFigures;
  deepOverFirst: { p50: number; p99: number };
}

export interface ScaleBenchResult {
  sizes: SizeFigures[];
  rounds: number;
  /** p99 of the kind filter at the largest size over the smallest. */
  kindP99LargestOverSmallest: number;
}

/** `1m` → 1_000_000, `200k` → 200_000. */
export function parseSize(text: string): number {
  const match = /^(\d+)([km]?)$/i.exec(text.trim());
  if (!match) throw new Error(`event counts look like 200k or 10m, got "${text}"`);
  return Number(match[1]) * ({ k: 1e3, m: 1e6 }[match[2]!.toLowerCase()] ?? 1);
}

async function walkTo(url: string, offset: number, log: Log): Promise<string> {
  let cursor: string | undefined;
  for (let seen = 0; seen < offset; seen += WALK_LIMIT) {
    const response = await fetch(`${url}/v1/events?cycles=all&limit=${WALK_LIMIT}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    const body = (await response.json()) as { nextCursor?: string };
    if (!body.nextCursor) throw new Error(`the list ended before ${offset} rows`);
    cursor = body.nextCursor;
    if ((seen / WALK_LIMIT) % 500 === 0) log(`  walking: ${seen} rows`);
  }
  return cursor!;
}

/**
 * Waits until Elasticsearch has no merge running: a fresh generation keeps merging for a while
 * after its load, and latencies taken then measure the merges, not the queries (a 10 M-row
 * generation: kind-filter p99 70 ms while merging, 26 ms after).
 */
async function mergesSettled(client: Client, log: Log): Promise<void> {
  const started = Date.now();
  for (;;) {
    const stats = await client.nodes.stats({ metric: 'indices', index_metric: 'merge' });
    const running = Object.values(stats.nodes).reduce((n, node) => n + (node.indices?.merges?.current ?? 0), 0);
    if (running === 0) return;
    if (Date.now() - started > 600_000) return log('merges still running after 10 min; measuring anyway');
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

/** One size, loaded and served: what the rounds measure. */
interface Loaded {
  label: string;
  events: number;
  load: SizeFigures['load'];
  gateway: Gateway;
  /** The paths of the three measurements. */
  first: string;
  deep: string;
  kinds: string[];
  deepOffset: number;
}

async function loadSize(client: Client, esUrl: string, config: Readonly<Config>, events: number, log: Log): Promise<Loaded> {
  const label = events >= 1e6 ? `${events / 1e6}m` : `${events / 1e3}k`;
  const prefix = `bench-events-${label}`;
  const perEntity = Math.ceil(events / (SCALE * 100));
  const dir = await ensureBundle(path.join(config.cacheDir, `bench-events-${label}`), { scale: SCALE, eventsPerEntity: perEntity, includeChainObjects: false }, log);
  log(`events ${label}: loading (${prefix}) ...`);
  const loaded = await runLoader(dir, esUrl, config, prefix, true);
  const index = indexName(prefix, 'events', (await liveGeneration(client, prefix))!.generation);
  const total = (await client.count({ index })).count;
  const gateway = await spawnGateway({ ES_URL: esUrl, INDEX_PREFIX: prefix });
  const deepOffset = Math.min(DEEP_ROWS, Math.floor(total / 2));
  const first = `/v1/events?cycles=all&limit=${LIMIT}`;
  const cursor = await walkTo(gateway.url, deepOffset, log);
  const kinds = ((await client.search({ index, size: 0, aggs: { kinds: { terms: { field: 'kind', size: 100 } } } })).aggregations?.kinds as { buckets: { key: string }[] }).buckets;
  return {
    label,
    events: total,
    load: { seconds: round(loaded.seconds), rowsPerSecond: Math.round(loaded.rows / loaded.seconds), peakRssMb: loaded.peakRssMb },
    gateway,
    first,
    deep: `${first}&cursor=${encodeURIComponent(cursor)}`,
    kinds: kinds.map((b) => `/v1/events?kind=${encodeURIComponent(b.key)}&limit=${LIMIT}`),
    deepOffset,
  };
}

/** The mean of each figure over the rounds. */
function meanOf(runs: LoadFigures[]): LoadFigures {
  const avg = (pick: (f: LoadFigures) => number) => round(mean(runs.map(pick)), 1);
  return {
    requestsPerSecond: Math.round(mean(runs.map((f) => f.requestsPerSecond))),
    p50Ms: avg((f) => f.p50Ms),
    p99Ms: avg((f) => f.p99Ms),
    requests: runs.reduce((n, f) => n + f.requests, 0),
    non2xx: runs.reduce((n, f) => n + f.non2xx, 0),
    errors: runs.reduce((n, f) => n + f.errors, 0),
  };
}

/**
 * Every size is loaded first; then, once no merge runs, the sizes are measured in interleaved
 * rounds (each size's first page, deep page and kind filter per round), so a disturbance of the
 * shared machine falls on all sizes alike.
 */
export async function benchScale(options: { client: Client; esUrl: string; config: Readonly<Config>; sizes: number[]; seconds: number; rounds: number; log: Log }): Promise<ScaleBenchResult> {
  const { client, esUrl, config, seconds, rounds, log } = options;
  const loaded: Loaded[] = [];
  try {
    for (const events of options.sizes) loaded.push(await loadSize(client, esUrl, config, events, log));
    await mergesSettled(client, log);
    const runs = loaded.map(() => ({ first: [] as LoadFigures[], deep: [] as LoadFigures[], kind: [] as LoadFigures[] }));
    for (let r = 0; r < rounds; r += 1) {
      for (const [i, size] of loaded.entries()) {
        // Each target is warmed for a second first: on these machines the page cache is reclaimed
        // eagerly, and a cold first pass over the kinds of 10 M rows measured disk reads (p99 80 ms
        // in one round, 22 ms in the next).
        const measured = async (requests: { path: string }[]) => {
          await drive({ url: size.gateway.url, requests }, 1);
          return drive({ url: size.gateway.url, requests }, seconds);
        };
        runs[i]!.first.push(await measured([{ path: size.first }]));
        runs[i]!.deep.push(await measured([{ path: size.deep }]));
        runs[i]!.kind.push(await measured(size.kinds.map((p) => ({ path: p }))));
        log(`events ${size.label} round ${r + 1}: first p99 ${runs[i]!.first.at(-1)!.p99Ms} ms, deep p99 ${runs[i]!.deep.at(-1)!.p99Ms} ms, kind p99 ${runs[i]!.kind.at(-1)!.p99Ms} ms`);
      }
    }
    const sizes = loaded.map((size, i): SizeFigures => {
      const [firstPage, deepPage, kindFilter] = [meanOf(runs[i]!.first), meanOf(runs[i]!.deep), meanOf(runs[i]!.kind)];
      return {
        events: size.events,
        load: size.load,
        deepOffset: size.deepOffset,
        firstPage,
        deepPage,
        kindFilter,
        deepOverFirst: { p50: round(deepPage.p50Ms / Math.max(firstPage.p50Ms, 1)), p99: round(deepPage.p99Ms / Math.max(firstPage.p99Ms, 1)) },
      };
    });
    return { sizes, rounds, kindP99LargestOverSmallest: round(sizes.at(-1)!.kindFilter.p99Ms / Math.max(sizes[0]!.kindFilter.p99Ms, 1)) };
  } finally {
    await Promise.all(loaded.map((size) => size.gateway.stop()));
  }
}
