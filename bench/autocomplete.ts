/**
 * Autocomplete benchmark (issue 15): `/v1/autocomplete` on the 1.5 M-row bundle (scale 550,
 * 166 k entities), 10 connections, prefixes of real names (2 to 8 characters) in rotation, beside
 * the same searches sent to Elasticsearch directly; and the share of names that only one
 * entity starts with whose shortest such prefix puts that entity first (prefix top-1).
 */
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { ensureBundle } from '../generator/write-bundle.ts';
import { type BundleRow, readAllRows } from '../generator/read-bundle.ts';
import { liveGeneration } from '../loader/generations.ts';
import { loadBundle } from '../loader/load-bundle.ts';
import type { Config } from '../src/config.ts';
import { indexName } from '../src/indices/generation.ts';
import { toAutocompleteBody } from '../src/query/autocomplete.ts';
import { type LoadFigures, type Log, type Target, drive, round, spawnGateway } from './support.ts';

/** Its own prefix: the overload bench may hold another scale under its own. */
const PREFIX = 'bench-autocomplete';
const SAMPLE = 2000;
const TOP1_SAMPLE = 500;

export interface AutocompleteBenchResult {
  bundle: { scale: number; entities: number };
  gateway: LoadFigures;
  elasticsearch: LoadFigures;
  /** Names only one entity starts with: how often its shortest unique prefix answered it first. */
  top1: { tried: number; first: number; share: number };
}

const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v : undefined);
/** Lower case per code point, as the index's `lowercase` normalizer folds. */
const fold = (s: string) => Array.from(s, (ch) => ch.toLowerCase()).join('');
const namesOf = (r: BundleRow) => [...new Set([text(r.name), text(r.displayName)].filter((n): n is string => n !== undefined).map(fold))];

/** Every `step`-th row: a sample spread over the whole file, the same on every run. */
const spread = <T>(rows: T[], n: number) => rows.filter((_, i) => i % Math.max(1, Math.floor(rows.length / n)) === 0).slice(0, n);

export async function benchAutocomplete(options: { client: Client; esUrl: string; config: Readonly<Config>; scale: number; seconds: number; log: Log }): Promise<AutocompleteBenchResult> {
  const { client, esUrl, config, scale, seconds, log } = options;
  const dir = await ensureBundle(path.join(config.cacheDir, `bench-bundle-scale-${scale}`), { scale }, log);
  log(`autocomplete: loading scale ${scale} under ${PREFIX} (a no-op when it is live)`);
  await loadBundle(dir, { client, prefix: PREFIX, dataDir: path.join(config.cacheDir, 'bench-data'), cycleStarts: config.cycleStarts });
  const generation = (await liveGeneration(client, PREFIX))!;
  const rows = [...new Map((await readAllRows(dir, 'entities.jsonl')).map((r) => [r.id, r])).values()].filter((r) => r.environment === 'stillness');

  const queries = spread(rows, SAMPLE).flatMap((r, i) => {
    const name = Array.from(namesOf(r)[0] ?? '');
    return name.length >= 2 ? [name.slice(0, 2 + (i % 7)).join('')] : [];
  });
  const gatewayPaths = queries.map((q) => ({ path: `/v1/autocomplete?cycles=all&q=${encodeURIComponent(q)}` }));
  const index = indexName(PREFIX, 'entities', generation.generation);
  const directRequests = queries.map((q) => ({
    path: `/${index}/_search`,
    method: 'POST' as const,
    body: JSON.stringify(toAutocompleteBody({ q, environment: 'stillness', scope: { kind: 'all' } }, generation.currentCycle)),
  }));

  const gateway = await spawnGateway({ ES_URL: esUrl, INDEX_PREFIX: PREFIX, DATA_DIR: path.join(config.cacheDir, 'bench-data') });
  try {
    const measured = async (url: string, requests: Target['requests']) => {
      await drive({ url, requests }, 1);
      return drive({ url, requests }, seconds);
    };
    const direct = await measured(esUrl, directRequests);
    const served = await measured(gateway.url, gatewayPaths);
    log(`autocomplete: gateway p50/p99 ${served.p50Ms}/${served.p99Ms} ms, Elasticsearch directly ${direct.p50Ms}/${direct.p99Ms} ms`);

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
    log(`autocomplete: prefix top-1 ${first}/${tried}`);
    return { bundle: { scale, entities: rows.length }, gateway: served, elasticsearch: direct, top1: { tried, first, share: round(first / Math.max(tried, 1), 3) } };
  } finally {
    await gateway.stop();
  }
}
