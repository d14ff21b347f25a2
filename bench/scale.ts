/**
 * Scale benchmark: `/v1/events` on bundles whose events file holds 1 M and 10 M rows (sizes
 * are options). For each size: a fresh load (rows/s, the loader's peak RSS), then under 10
 * connections the first page, a page deep in the list (a cursor reached by walking the API
 * past the first 500 k rows, or half the list when it is shorter) and the `kind` filter
 * (rotating over every kind). Deep page over first page, and the kind filter's p99 at the
 * largest size over the smallest, are what index sorting and `search_after` must keep flat.
 * Latencies are taken once the cluster has no merge running (steady state), in interleaved
 * rounds, and averaged.
 *
 * Query power, at each size: `group_by=kind` and `group_by=occurredAt:day` over every
 * event, and what `meta.count` costs: the first page of the default scope as Elasticsearch
 * request sent directly with no count, with the gateway's count (exact up to 100,000 rows, a
 * lower bound beyond) and with an exact count of every row.
 */
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { ensureBundle } from '../generator/write-bundle.ts';
import { liveGeneration } from '../loader/generations.ts';
import { spawnGateway } from '../harness/gateway-process.ts';
import type { Listener } from '../harness/listener.ts';
import type { Config } from '../src/config.ts';
import { type GenerationDoc, indexName } from '../src/indices/generation.ts';
import { TIMELINE_COUNT_UP_TO } from '../src/query/timeline.ts';
import { toEventListBody } from '../src/query/timeline.ts';
import { rowRequest, searchPath } from '../src/search/search-service.ts';
import { runLoader } from './load.ts';
import { type LoadFigures, type Log, type Target, drive, mean, meanFigures, mergesSettled, round } from './support.ts';

/** Entities of the scale bundles; events per entity makes up the size. */
const SCALE = 20;
const DEEP_ROWS = 500_000;
const WALK_LIMIT = 200;
const LIMIT = 50;

export interface SizeFigures {
  events: number;
  /** Absent with `--reuse`: the generation was already live, nothing was loaded. */
  load?: { seconds: number; rowsPerSecond: number; peakRssMb: number };
  deepOffset: number;
  firstPage: LoadFigures;
  deepPage: LoadFigures;
  kindFilter: LoadFigures;
  deepOverFirst: { p50: number; p99: number };
  groupByKind: LoadFigures;
  groupByDay: LoadFigures;
  /** The first page's search sent to Elasticsearch directly, by how it counts. */
  count: { none: LoadFigures; upTo100k: LoadFigures; exact: LoadFigures };
}

export interface ScaleBenchResult {
  sizes: SizeFigures[];
  rounds: number;
  /** p99 of the kind filter at the largest size over the smallest. */
  kindP99LargestOverSmallest: number;
  /** p99 of group_by=kind and group_by=occurredAt:day at the largest size over the smallest. */
  groupByKindP99LargestOverSmallest: number;
  groupByDayP99LargestOverSmallest: number;
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

/** One size, loaded and served: what the rounds measure. */
interface Loaded {
  label: string;
  events: number;
  load?: SizeFigures['load'];
  gateway: Listener;
  /** The paths of the three measurements. */
  first: string;
  deep: string;
  kinds: string[];
  deepOffset: number;
  esUrl: string;
  /** The first page's search, sent to Elasticsearch directly: path and body by counting mode. */
  direct: { path: string; bodies: Record<'none' | 'upTo100k' | 'exact', string> };
}

async function loadSize(client: Client, esUrl: string, config: Readonly<Config>, events: number, reuse: boolean, log: Log): Promise<Loaded> {
  const label = events >= 1e6 ? `${events / 1e6}m` : `${events / 1e3}k`;
  const prefix = `bench-events-${label}`;
  const perEntity = Math.ceil(events / (SCALE * 100));
  const dir = await ensureBundle(path.join(config.cacheDir, `bench-events-${label}`), { scale: SCALE, eventsPerEntity: perEntity, includeChainObjects: false }, log);
  log(`events ${label}: loading (${prefix}) ...`);
  // `reuse`: keep a generation of this bundle that is already live (the loader's no-op).
  const loaded = await runLoader(dir, esUrl, config, prefix, !reuse);
  const generation = (await liveGeneration(client, prefix))!;
  const index = indexName(prefix, 'events', generation.generation);
  const total = (await client.count({ index })).count;
  const gateway = await spawnGateway({ ES_URL: esUrl, INDEX_PREFIX: prefix });
  const deepOffset = Math.min(DEEP_ROWS, Math.floor(total / 2));
  const first = `/v1/events?cycles=all&limit=${LIMIT}`;
  const cursor = await walkTo(gateway.url, deepOffset, log);
  const kinds = ((await client.search({ index, size: 0, aggs: { kinds: { terms: { field: 'kind', size: 100 } } } })).aggregations?.kinds as { buckets: { key: string }[] }).buckets;
  return {
    label,
    events: total,
    load: loaded.rows === 0 ? undefined : { seconds: round(loaded.seconds), rowsPerSecond: Math.round(loaded.rows / loaded.seconds), peakRssMb: loaded.peakRssMb },
    gateway,
    first,
    deep: `${first}&cursor=${encodeURIComponent(cursor)}`,
    kinds: kinds.map((b) => `/v1/events?kind=${encodeURIComponent(b.key)}&limit=${LIMIT}`),
    deepOffset,
    esUrl,
    direct: {
      path: searchPath(index),
      bodies: {
        none: directBody(false, generation),
        upTo100k: directBody(TIMELINE_COUNT_UP_TO, generation),
        exact: directBody(true, generation),
      },
    },
  };
}

/**
 * The body the gateway sends for the first page of `/v1/events` (default scope: the current
 * cycle and uncycled rows, a conjunction Elasticsearch must walk to count), counting as told.
 */
function directBody(count: boolean | number, generation: GenerationDoc): string {
  return JSON.stringify(rowRequest(generation, 'events', toEventListBody({ environment: 'stillness', scope: { kind: 'default' }, limit: LIMIT }, generation.currentCycle, { count })));
}

/**
 * Every size is loaded first; then, once no merge runs, the sizes are measured in interleaved
 * rounds (each size's first page, deep page and kind filter per round), so a disturbance of the
 * shared machine falls on all sizes alike.
 */
export async function benchScale(options: {
  client: Client;
  esUrl: string;
  config: Readonly<Config>;
  sizes: number[];
  seconds: number;
  rounds: number;
  /** Measure the generations already live instead of loading each size afresh. */
  reuse?: boolean;
  log: Log;
}): Promise<ScaleBenchResult> {
  const { client, esUrl, config, seconds, rounds, reuse = false, log } = options;
  const loaded: Loaded[] = [];
  try {
    for (const events of options.sizes) loaded.push(await loadSize(client, esUrl, config, events, reuse, log));
    await mergesSettled(client, log);
    const runs = loaded.map(() => ({
      first: [] as LoadFigures[],
      deep: [] as LoadFigures[],
      kind: [] as LoadFigures[],
      byKind: [] as LoadFigures[],
      byDay: [] as LoadFigures[],
      none: [] as LoadFigures[],
      upTo100k: [] as LoadFigures[],
      exact: [] as LoadFigures[],
    }));
    for (let r = 0; r < rounds; r += 1) {
      for (const [i, size] of loaded.entries()) {
        // Each target is warmed for a second first: on these machines the page cache is reclaimed
        // eagerly, and a cold first pass over the kinds of 10 M rows measured disk reads (p99 80 ms
        // in one round, 22 ms in the next).
        const measured = async (requests: Target['requests'], url = size.gateway.url) => {
          await drive({ url, requests }, 1);
          return drive({ url, requests }, seconds);
        };
        const run = runs[i]!;
        run.first.push(await measured([{ path: size.first }]));
        run.deep.push(await measured([{ path: size.deep }]));
        run.kind.push(await measured(size.kinds.map((p) => ({ path: p }))));
        run.byKind.push(await measured([{ path: '/v1/events?cycles=all&group_by=kind' }]));
        run.byDay.push(await measured([{ path: '/v1/events?cycles=all&group_by=occurredAt:day' }]));
        for (const mode of ['none', 'upTo100k', 'exact'] as const) {
          run[mode].push(await measured([{ path: size.direct.path, method: 'POST', body: size.direct.bodies[mode] }], size.esUrl));
        }
        log(
          `events ${size.label} round ${r + 1}: first p99 ${run.first.at(-1)!.p99Ms} ms, deep p99 ${run.deep.at(-1)!.p99Ms} ms, kind p99 ${run.kind.at(-1)!.p99Ms} ms, ` +
            `group_by kind p99 ${run.byKind.at(-1)!.p99Ms} ms, day p99 ${run.byDay.at(-1)!.p99Ms} ms, ES first page p99 uncounted/100k/exact ` +
            `${run.none.at(-1)!.p99Ms}/${run.upTo100k.at(-1)!.p99Ms}/${run.exact.at(-1)!.p99Ms} ms`,
        );
      }
    }
    const sizes = loaded.map((size, i): SizeFigures => {
      const [firstPage, deepPage, kindFilter] = [meanFigures(runs[i]!.first), meanFigures(runs[i]!.deep), meanFigures(runs[i]!.kind)];
      return {
        events: size.events,
        load: size.load,
        deepOffset: size.deepOffset,
        firstPage,
        deepPage,
        kindFilter,
        deepOverFirst: { p50: round(deepPage.p50Ms / Math.max(firstPage.p50Ms, 1)), p99: round(deepPage.p99Ms / Math.max(firstPage.p99Ms, 1)) },
        groupByKind: meanFigures(runs[i]!.byKind),
        groupByDay: meanFigures(runs[i]!.byDay),
        count: { none: meanFigures(runs[i]!.none), upTo100k: meanFigures(runs[i]!.upTo100k), exact: meanFigures(runs[i]!.exact) },
      };
    });
    const growth = (pick: (size: SizeFigures) => LoadFigures) => round(pick(sizes.at(-1)!).p99Ms / Math.max(pick(sizes[0]!).p99Ms, 1));
    return {
      sizes,
      rounds,
      kindP99LargestOverSmallest: growth((size) => size.kindFilter),
      groupByKindP99LargestOverSmallest: growth((size) => size.groupByKind),
      groupByDayP99LargestOverSmallest: growth((size) => size.groupByDay),
    };
  } finally {
    await Promise.all(loaded.map((size) => size.gateway.stop()));
  }
}
