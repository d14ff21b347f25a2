/**
 * Scale benchmark: `/v1/events` on bundles whose events file holds 1 M and 10 M rows (sizes
 * are options). For each size: a fresh load (rows/s, the loader's peak RSS), then under 10
 * connections the first page, a page deep in the list (a cursor reached by walking the API
 * past the first 500 k rows, or half the list when it is shorter) and the `kind` filter
 * (rotating over every kind). Deep page over first page, and the kind filter's p99 at the
 * largest size over the smallest, are what index sorting and `search_after` must keep flat.
 * Latencies are taken once the cluster has no merge running (steady state).
 */
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { ensureBundle } from '../generator/write-bundle.ts';
import { liveGeneration } from '../loader/generations.ts';
import type { Config } from '../src/config.ts';
import { indexName } from '../src/indices/generation.ts';
import { runLoader } from './load.ts';
import { type LoadFigures, type Log, drive, round, spawnGateway } from './support.ts';

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

async function measure(client: Client, esUrl: string, config: Readonly<Config>, events: number, seconds: number, log: Log): Promise<SizeFigures> {
  const label = events >= 1e6 ? `${events / 1e6}m` : `${events / 1e3}k`;
  const prefix = `bench-events-${label}`;
  const perEntity = Math.ceil(events / (SCALE * 100));
  const dir = await ensureBundle(path.join(config.cacheDir, `bench-events-${label}`), { scale: SCALE, eventsPerEntity: perEntity, includeChainObjects: false }, log);
  log(`events ${label}: loading (${prefix}) ...`);
  const loaded = await runLoader(dir, esUrl, config, prefix, true);
  const after = (await liveGeneration(client, prefix))!;
  const total = (await client.count({ index: indexName(prefix, 'events', after.generation) })).count;
  await mergesSettled(client, log);
  const gateway = await spawnGateway({ ES_URL: esUrl, INDEX_PREFIX: prefix });
  try {
    const offset = Math.min(DEEP_ROWS, Math.floor(total / 2));
    const cursor = await walkTo(gateway.url, offset, log);
    const kinds = ((await client.search({ index: indexName(prefix, 'events', after.generation), size: 0, aggs: { kinds: { terms: { field: 'kind', size: 100 } } } }))
      .aggregations?.kinds as { buckets: { key: string }[] }).buckets.map((b) => b.key);
    const first = `/v1/events?cycles=all&limit=${LIMIT}`;
    await drive({ url: gateway.url, requests: [{ path: first }] }, 1);
    const firstPage = await drive({ url: gateway.url, requests: [{ path: first }] }, seconds);
    const deepPage = await drive({ url: gateway.url, requests: [{ path: `${first}&cursor=${encodeURIComponent(cursor)}` }] }, seconds);
    const kindFilter = await drive({ url: gateway.url, requests: kinds.map((k) => ({ path: `/v1/events?kind=${encodeURIComponent(k)}&limit=${LIMIT}` })) }, seconds);
    log(`events ${label}: first p99 ${firstPage.p99Ms} ms, deep p99 ${deepPage.p99Ms} ms, kind p99 ${kindFilter.p99Ms} ms`);
    return {
      events: total,
      load: { seconds: round(loaded.seconds), rowsPerSecond: Math.round(loaded.rows / loaded.seconds), peakRssMb: loaded.peakRssMb },
      deepOffset: offset,
      firstPage,
      deepPage,
      kindFilter,
      deepOverFirst: { p50: round(deepPage.p50Ms / Math.max(firstPage.p50Ms, 1)), p99: round(deepPage.p99Ms / Math.max(firstPage.p99Ms, 1)) },
    };
  } finally {
    await gateway.stop();
  }
}

export async function benchScale(options: { client: Client; esUrl: string; config: Readonly<Config>; sizes: number[]; seconds: number; log: Log }): Promise<ScaleBenchResult> {
  const sizes: SizeFigures[] = [];
  for (const events of options.sizes) sizes.push(await measure(options.client, options.esUrl, options.config, events, options.seconds, options.log));
  const smallest = sizes[0]!.kindFilter.p99Ms;
  const largest = sizes.at(-1)!.kindFilter.p99Ms;
  return { sizes, kindP99LargestOverSmallest: round(largest / Math.max(smallest, 1)) };
}
