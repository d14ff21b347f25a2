/**
 * Row counts for the `/metrics` gauges, counted once per generation (a generation never changes).
 *
 * - `<key>`: what the specification calls "indexed row counts": the documents each bundle file
 *   became in the live generation (its `rowCount` less repeated ids, as the loader proved), all
 *   environments and cycles; `current_<collection>` the rows of that collection in the whole
 *   current file; `source_gaps` every exported gap.
 * - `default_scope_<key>`: the same keys counted as the default lists show them (default
 *   environment; for the scoped indices the current cycle plus uncycled rows; a current
 *   collection that falls back counts the entity rows it lists).
 *
 * Zero counts are reported too (the reference dropped them: its weak point 13).
 */
import type { Config } from '../config.ts';
import type { CountGauge } from '../http/metrics.ts';
import type { IndexName } from '../indices/all.ts';
import { CURRENT_ENTITY_COLLECTIONS, CURRENT_RELATION_COLLECTIONS } from '../indices/collections.ts';
import { UNADMITTED } from '../limits/admission.ts';
import { currentEntityFilter, toCollectionCountsBody } from '../query/current.ts';
import { type Query, environmentScope, term } from '../query/list.ts';
import type { Reader, SearchService } from '../search/search-service.ts';

type Filter = (env: string, currentCycle: number) => Query[];
/** `fallback`: what the route lists instead when the collection has no rows in scope. */
type Counter = { key: string; index: IndexName; filter: Filter; fallback?: { index: IndexName; filter: Filter } };

const DEFAULT_SCOPE = { kind: 'default' } as const;
const scoped = (env: string, cycle: number) => environmentScope(env, DEFAULT_SCOPE, cycle);
const byEnvironment = (env: string) => [term('environment', env)];

/** Gauge key of a current collection (`route-edges` → `current_route_edges`). */
const currentKey = (collection: string) => `current_${collection.replace(/[^a-z]/g, '_')}`;

/** Row-fed indices with a gauge of their own, under the reference's names (`artefacts`). */
const INDEX_KEYS: [IndexName, string][] = [
  ['entities', 'entities'],
  ['sources', 'sources'],
  ['events', 'events'],
  ['killmails', 'killmails'],
  ['facts', 'facts'],
  ['relations', 'relations'],
  ['entity_sources', 'entity_sources'],
  ['source_artefacts', 'artefacts'],
  ['chain_objects', 'chain_objects'],
];

/** How each key is counted in the default scope. */
const DEFAULT_SCOPE_COUNTERS: Counter[] = [
  { key: 'entities', index: 'entities', filter: scoped },
  { key: 'sources', index: 'sources', filter: byEnvironment },
  { key: 'events', index: 'events', filter: scoped },
  { key: 'killmails', index: 'killmails', filter: scoped },
  { key: 'facts', index: 'facts', filter: byEnvironment },
  { key: 'relations', index: 'relations', filter: byEnvironment },
  { key: 'entity_sources', index: 'entity_sources', filter: byEnvironment },
  { key: 'artefacts', index: 'source_artefacts', filter: byEnvironment },
  { key: 'chain_objects', index: 'chain_objects', filter: byEnvironment },
  ...Object.entries(CURRENT_ENTITY_COLLECTIONS).map(([c, { entityType, fallback }]): Counter => ({
    key: currentKey(c),
    index: 'current_entities',
    filter: (env, cycle) => currentEntityFilter(c, env, DEFAULT_SCOPE, cycle),
    // The route falls back to entity rows of the type; the gauge counts what the route shows.
    fallback: fallback ? { index: 'entities', filter: (env, cycle) => [term('entityType', entityType), ...scoped(env, cycle)] } : undefined,
  })),
  ...Object.keys(CURRENT_RELATION_COLLECTIONS).map((c): Counter => ({
    key: currentKey(c),
    index: 'current_relations',
    filter: (env, cycle) => [term('collection', c), ...scoped(env, cycle)],
  })),
];

const CURRENT_KEYS = [...Object.keys(CURRENT_ENTITY_COLLECTIONS), ...Object.keys(CURRENT_RELATION_COLLECTIONS)].map(currentKey);
const KEYS = [...INDEX_KEYS.map(([, key]) => key), ...CURRENT_KEYS, 'source_gaps'];

/** Every gauge, with its help text: the indexed counts, then their default-scope twins. */
export function countGauges(defaultEnvironment: string): CountGauge[] {
  return [
    ...KEYS.map((key) => ({ key, help: `Rows of ${key} indexed in the live generation (every environment and cycle).` })),
    ...KEYS.map((key) => ({
      key: `default_scope_${key}`,
      help: `Rows of ${key} the default list shows (${defaultEnvironment}, current cycle + uncycled).`,
    })),
  ];
}

const gapsOf = (reader: Reader): Record<string, unknown>[] => {
  const data = (reader.generation.ops.sourceGaps as { data?: unknown } | undefined)?.data;
  return Array.isArray(data) ? (data as Record<string, unknown>[]) : [];
};

/** Rows per collection of a current index (one terms aggregation), zero for collections without rows. */
async function collectionCounts(reader: Reader, index: 'current_entities' | 'current_relations', collections: string[]): Promise<Record<string, number>> {
  const response = await reader.search(index, toCollectionCountsBody(collections.length));
  const buckets = (response.aggregations?.collections as { buckets?: { key: string; doc_count: number }[] } | undefined)?.buckets ?? [];
  const found = new Map(buckets.map((b) => [b.key, b.doc_count]));
  return Object.fromEntries(collections.map((c) => [currentKey(c), found.get(c) ?? 0]));
}

async function indexedCounts(reader: Reader): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  // The loader proved each index holds one document per distinct id and recorded the count.
  for (const [index, key] of INDEX_KEYS) counts[key] = reader.generation.counts[index] ?? 0;
  Object.assign(
    counts,
    await collectionCounts(reader, 'current_entities', Object.keys(CURRENT_ENTITY_COLLECTIONS)),
    await collectionCounts(reader, 'current_relations', Object.keys(CURRENT_RELATION_COLLECTIONS)),
  );
  counts.source_gaps = gapsOf(reader).length;
  return counts;
}

async function defaultScopeCounts(reader: Reader, env: string): Promise<Record<string, number>> {
  const { currentCycle } = reader.generation;
  const countOf = (index: IndexName, filter: Filter) => reader.count(index, { bool: { filter: filter(env, currentCycle) } });
  const counts: Record<string, number> = {};
  // One at a time: about 30 counts of a few ms, once per generation. Fired together they took
  // every admission slot at once (src/search/admission.ts) and were refused under load.
  for (const c of DEFAULT_SCOPE_COUNTERS) {
    const n = await countOf(c.index, c.filter);
    counts[c.key] = n === 0 && c.fallback ? await countOf(c.fallback.index, c.fallback.filter) : n;
  }
  counts.source_gaps = gapsOf(reader).filter((g) => g?.environment === env).length;
  return counts;
}

/** Gauge key → value for the live generation; empty while nothing is loaded. */
export function createCountSource(search: SearchService, config: Readonly<Config>): () => Promise<Record<string, number>> {
  let cached: { generation: string; counts: Promise<Record<string, number>> } | undefined;
  async function count(): Promise<Record<string, number>> {
    // The gateway's own work (a metrics scrape counts every index at once): never refused.
    const reader = await search.reader(UNADMITTED);
    const [indexed, scoped] = await Promise.all([indexedCounts(reader), defaultScopeCounts(reader, config.defaultEnvironment)]);
    return { ...indexed, ...Object.fromEntries(Object.entries(scoped).map(([key, n]) => [`default_scope_${key}`, n])) };
  }
  return async () => {
    const live = await search.live();
    if (!live) return {};
    if (cached?.generation !== live.generation) {
      cached = { generation: live.generation, counts: count() };
      cached.counts.catch(() => (cached = undefined));
    }
    return cached.counts;
  };
}
