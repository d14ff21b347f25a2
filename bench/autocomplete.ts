/**
 * Autocomplete benchmark: `/v1/autocomplete` at two catalogue sizes in one run — the 1.5 M-row
 * bundle (scale 550, 55 k entities) and an entities-only bundle three times as large (scale
 * 1660, 166 k entities) — 10 connections, prefixes of real names (2 to 8 characters) in rotation,
 * beside the query shapes sent to Elasticsearch directly: the completion suggester the route
 * sends first (an FST walk, with the exact id or slug lookup where the text may be one), and the two it sends together when that gives fewer than ten: the
 * same suggester with one typo, and the scored query on `index_prefixes` (what the route sent
 * alone before). Edge n-grams are not measured: their tokenizer lives in
 * the analysis-common module, which the distribution this project runs on does not have.
 * And the share of names only one entity starts with whose shortest such prefix puts that
 * entity first (prefix top-1).
 */
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { ensureBundle } from '../generator/write-bundle.ts';
import { type BundleRow, readAllRows } from '../generator/read-bundle.ts';
import { liveGeneration } from '../loader/generations.ts';
import { loadBundle } from '../loader/load-bundle.ts';
import { spawnGateway } from '../harness/gateway-process.ts';
import type { Config } from '../src/config.ts';
import { concreteIndex } from '../src/indices/generation.ts';
import { SCORED_FILTER, SUGGEST_FILTER, TYPOS_FILTER, UNSEPARATED_IDS, needsExactLookup, toAutocompleteBody, toSuggestBody, toTyposBody } from '../src/query/autocomplete.ts';
import { type LoadFigures, type Log, type Target, drive, round } from './support.ts';

const SAMPLE = 2000;
const TOP1_SAMPLE = 500;

/** The two catalogues: the benchmark bundle, and an entities-only one three times its entities. */
const SIZES = [
  { name: 'bench-bundle-scale-550', scale: 550, options: {} },
  { name: 'bench-entities-1660', scale: 1660, options: { includeEvents: false, includeChainObjects: false } },
] as const;

export interface AutocompleteSize {
  scale: number;
  entities: number;
  gateway: LoadFigures;
  /** The suggester request, the typos suggester and the scored query, each sent to Elasticsearch directly. */
  suggester: LoadFigures;
  typos: LoadFigures;
  scored: LoadFigures;
  /** Names only one entity starts with: how often its shortest unique prefix answered it first. */
  top1: { tried: number; first: number; share: number };
}

export interface AutocompleteBenchResult {
  sizes: AutocompleteSize[];
  /** Gateway p99 at the largest size over the smallest. */
  p99Growth: number;
}

const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v : undefined);
/** Lower case per code point, as the index's `lowercase` normalizer folds. */
const fold = (s: string) => Array.from(s, (ch) => ch.toLowerCase()).join('');
const namesOf = (r: BundleRow) => [...new Set([text(r.name), text(r.displayName)].filter((n): n is string => n !== undefined).map(fold))];

/** Every `step`-th row: a sample spread over the whole file, the same on every run. */
const spread = <T>(rows: T[], n: number) => rows.filter((_, i) => i % Math.max(1, Math.floor(rows.length / n)) === 0).slice(0, n);

async function benchSize(client: Client, esUrl: string, config: Readonly<Config>, size: (typeof SIZES)[number], seconds: number, log: Log): Promise<AutocompleteSize> {
  const prefix = `bench-ac-${size.scale}`;
  const dir = await ensureBundle(path.join(config.cacheDir, size.name), { scale: size.scale, ...size.options }, log);
  log(`autocomplete: loading scale ${size.scale} under ${prefix} (a no-op when it is live)`);
  await loadBundle(dir, { client, prefix, dataDir: path.join(config.cacheDir, 'bench-data'), cycleStarts: config.cycleStarts });
  const generation = (await liveGeneration(client, prefix))!;
  const rows = [...new Map((await readAllRows(dir, 'entities.jsonl')).map((r) => [r.id, r])).values()].filter((r) => r.environment === 'stillness');

  const queries = spread(rows, SAMPLE).flatMap((r, i) => {
    const name = Array.from(namesOf(r)[0] ?? '');
    return name.length >= 2 ? [name.slice(0, 2 + (i % 7)).join('')] : [];
  });
  const index = concreteIndex(prefix, generation, 'entities');
  // As the route sends them: the same body and the same `filter_path`.
  const direct = (body: (q: string) => unknown, filter: string) =>
    queries.map((q) => ({ path: `/${index}/_search?filter_path=${filter}`, method: 'POST' as const, body: JSON.stringify(body(q)) }));
  // With the exact id or slug lookup only where the route sends it (text that may be one).
  const everySeparated = (await client.count({ index, query: UNSEPARATED_IDS })).count === 0;
  const asked = (q: string) => ({ q, environment: 'stillness', scope: { kind: 'all' } as const, exact: needsExactLookup(q, everySeparated) });

  // The response cache off: the prefixes rotate, and each must be answered by Elasticsearch.
  const gateway = await spawnGateway({ ES_URL: esUrl, INDEX_PREFIX: prefix, DATA_DIR: path.join(config.cacheDir, 'bench-data'), RATE_LIMIT: 'off', ES_MAX_IN_FLIGHT: 'off', RESPONSE_CACHE: 'off' });
  try {
    const measured = async (url: string, requests: Target['requests']) => {
      await drive({ url, requests }, 1);
      return drive({ url, requests }, seconds);
    };
    const suggester = await measured(esUrl, direct((q) => toSuggestBody(asked(q), generation.currentCycle), SUGGEST_FILTER));
    const typos = await measured(esUrl, direct((q) => toTyposBody(asked(q), generation.currentCycle), TYPOS_FILTER));
    const scored = await measured(esUrl, direct((q) => toAutocompleteBody(asked(q), generation.currentCycle), SCORED_FILTER));
    const served = await measured(gateway.url, queries.map((q) => ({ path: `/v1/autocomplete?cycles=all&q=${encodeURIComponent(q)}` })));
    log(`autocomplete ${rows.length} entities: gateway p50/p99 ${served.p50Ms}/${served.p99Ms} ms; suggester ${suggester.p50Ms}/${suggester.p99Ms}, typos ${typos.p50Ms}/${typos.p99Ms}, scored query ${scored.p50Ms}/${scored.p99Ms} directly`);

    // Prefix counts of every name, to find the names only one entity starts with.
    const starts = new Map<string, number>();
    for (const r of rows) {
      const prefixes = new Set(namesOf(r).flatMap((n) => Array.from({ length: Math.min(Array.from(n).length, 12) - 2 }, (_, k) => Array.from(n).slice(0, k + 3).join(''))));
      for (const p of prefixes) starts.set(p, (starts.get(p) ?? 0) + 1);
    }
    let tried = 0;
    let first = 0;
    for (const r of spread(rows, TOP1_SAMPLE * 4)) {
      const name = Array.from(namesOf(r)[0] ?? '');
      const length = [...Array(Math.max(0, Math.min(name.length, 12) - 2)).keys()].map((k) => k + 3).find((n) => starts.get(name.slice(0, n).join('')) === 1);
      if (length === undefined) continue;
      const body = (await (await fetch(`${gateway.url}/v1/autocomplete?cycles=all&q=${encodeURIComponent(name.slice(0, length).join(''))}`)).json()) as { data: { id: string }[] };
      tried += 1;
      if (body.data[0]?.id === r.id) first += 1;
      if (tried === TOP1_SAMPLE) break;
    }
    log(`autocomplete ${rows.length} entities: prefix top-1 ${first}/${tried}`);
    return { scale: size.scale, entities: rows.length, gateway: served, suggester, typos, scored, top1: { tried, first, share: round(first / Math.max(tried, 1), 3) } };
  } finally {
    await gateway.stop();
  }
}

export async function benchAutocomplete(options: { client: Client; esUrl: string; config: Readonly<Config>; seconds: number; log: Log }): Promise<AutocompleteBenchResult> {
  const { client, esUrl, config, seconds, log } = options;
  const sizes: AutocompleteSize[] = [];
  for (const size of SIZES) sizes.push(await benchSize(client, esUrl, config, size, seconds, log));
  return { sizes, p99Growth: round(sizes.at(-1)!.gateway.p99Ms / Math.max(sizes[0]!.gateway.p99Ms, 0.001)) };
}
