/**
 * Row counts for the `/metrics` gauges, in the default scope (default environment; for the
 * scoped indices the current cycle plus uncycled rows), so the numbers match what the
 * default lists show (the reference counted whole tables: its weak point 13). Zero counts are
 * reported too. Counted once per generation: a generation never changes.
 */
import type { Config } from '../config.ts';
import type { IndexName } from '../indices/all.ts';
import { CURRENT_ENTITY_COLLECTIONS, CURRENT_RELATION_COLLECTIONS } from '../indices/collections.ts';
import { currentEntityFilter } from '../query/current.ts';
import { type Query, environmentScope, term } from '../query/list.ts';
import type { SearchService } from '../search/search-service.ts';

type Filter = (env: string, currentCycle: number) => Query[];
/** `fallback`: what the route lists instead when the collection has no rows in scope. */
type Counter = { key: string; index: IndexName; filter: Filter; fallback?: { index: IndexName; filter: Filter } };

const DEFAULT_SCOPE = { kind: 'default' } as const;
const scoped = (env: string, cycle: number) => environmentScope(env, DEFAULT_SCOPE, cycle);
const byEnvironment = (env: string) => [term('environment', env)];

const COUNTERS: Counter[] = [
  { key: 'entities', index: 'entities', filter: scoped },
  { key: 'sources', index: 'sources', filter: byEnvironment },
  { key: 'events', index: 'events', filter: scoped },
  { key: 'killmails', index: 'killmails', filter: scoped },
  { key: 'facts', index: 'facts', filter: byEnvironment },
  { key: 'relations', index: 'relations', filter: byEnvironment },
  { key: 'artefacts', index: 'source_artefacts', filter: byEnvironment },
  { key: 'chain_objects', index: 'chain_objects', filter: byEnvironment },
  ...Object.entries(CURRENT_ENTITY_COLLECTIONS).map(([c, { entityType, fallback }]): Counter => ({
    key: `current_${c}`,
    index: 'current_entities',
    filter: (env, cycle) => currentEntityFilter(c, env, DEFAULT_SCOPE, cycle),
    // The route falls back to entity rows of the type; the gauge counts what the route shows.
    fallback: fallback ? { index: 'entities', filter: (env, cycle) => [term('entityType', entityType), ...scoped(env, cycle)] } : undefined,
  })),
  ...Object.keys(CURRENT_RELATION_COLLECTIONS).map((c): Counter => ({
    key: `current_${c.replace(/[^a-z]/g, '_')}`,
    index: 'current_relations',
    filter: (env, cycle) => [term('collection', c), ...scoped(env, cycle)],
  })),
];

export function countKeys(): string[] {
  return [...COUNTERS.map((c) => c.key), 'source_gaps'];
}

export function createCountSource(search: SearchService, config: Readonly<Config>): () => Promise<Record<string, number>> {
  let cached: { generation: string; counts: Promise<Record<string, number>> } | undefined;
  async function count(): Promise<Record<string, number>> {
    const reader = await search.reader();
    const { currentCycle, ops } = reader.generation;
    const env = config.defaultEnvironment;
    const counts: Record<string, number> = {};
    const countOf = (index: IndexName, filter: Filter) => reader.count(index, { bool: { filter: filter(env, currentCycle) } });
    await Promise.all(
      COUNTERS.map(async (c) => {
        const n = await countOf(c.index, c.filter);
        counts[c.key] = n === 0 && c.fallback ? await countOf(c.fallback.index, c.fallback.filter) : n;
      }),
    );
    const gaps = (ops.sourceGaps as { data?: unknown } | undefined)?.data;
    counts.source_gaps = Array.isArray(gaps) ? gaps.filter((g) => (g as { environment?: string })?.environment === env).length : 0;
    return counts;
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
