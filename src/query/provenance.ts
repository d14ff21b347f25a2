/**
 * Provenance lists as request bodies: an entity's facts, relations (as subject or object)
 * and sources, and the `/v1/sources` list. Paged like every list (the reference returned
 * these unbounded: its weak point 6). Not cycle-scoped: provenance shows all evidence.
 */
import { entitySources, facts, relations, sources } from '../indices/provenance.ts';
import { type ListQuery, type PagePosition, type Query, type SearchBody, oneOf, scopeFilter, term, toListBody, toSort } from './list.ts';
import type { AnyOf } from './route-parameters.ts';
import type { CycleScope } from './scope.ts';
import { toTokensFilter } from './search.ts';

const FACT_SORT = toSort(facts, facts.sort);
const RELATION_SORT = toSort(relations, relations.sort);
const ENTITY_SOURCE_SORT = toSort(entitySources, entitySources.sort);
const SOURCE_SORT = toSort(sources, sources.sort);

/** Filters of an entity's facts beyond the entity (`confidence`). */
export interface FactFilters {
  confidence?: AnyOf;
}

export function toEntityFactsQuery(entityId: string, filters: FactFilters = {}): ListQuery {
  const filter = [term('entityId', entityId)];
  if (filters.confidence !== undefined) filter.push(oneOf('confidence', filters.confidence));
  return { filter, sort: FACT_SORT };
}

export function toEntityFactsBody(entityId: string, limit: number, page: PagePosition = {}, filters: FactFilters = {}): SearchBody {
  return toListBody({ ...toEntityFactsQuery(entityId, filters), limit, ...page });
}

export function toEntityRelationsQuery(entityId: string): ListQuery {
  const either: Query = { bool: { should: [term('subjectEntityId', entityId), term('objectEntityId', entityId)], minimum_should_match: 1 } };
  return { filter: [either], sort: RELATION_SORT };
}

export function toEntityRelationsBody(entityId: string, limit: number, page: PagePosition = {}): SearchBody {
  return toListBody({ ...toEntityRelationsQuery(entityId), limit, ...page });
}

export function toEntitySourcesQuery(entityId: string): ListQuery {
  return { filter: [term('entityId', entityId)], sort: ENTITY_SOURCE_SORT };
}

export function toEntitySourcesBody(entityId: string, limit: number, page: PagePosition = {}): SearchBody {
  return toListBody({ ...toEntitySourcesQuery(entityId), limit, ...page });
}

export interface SourceListParams {
  environment: string;
  /** Only when asked for: unlike entities, sources are listed across cycles by default. */
  scope: CycleScope;
  limit: number;
  q?: string;
  kind?: AnyOf;
  /** Only these sources (`id=a|b`). */
  ids?: AnyOf;
}

/** `/v1/sources`: the environment's sources and those without one, as the reference does; by kind, then id. */
export function toSourceListBody(params: SourceListParams, currentCycle: number, page: PagePosition = {}): SearchBody {
  return toListBody({ ...toSourceListQuery(params, currentCycle), limit: params.limit, ...page });
}

export function toSourceListQuery(params: Omit<SourceListParams, 'limit'>, currentCycle: number): ListQuery {
  const env: Query = {
    bool: { should: [term('environment', params.environment), { bool: { must_not: { exists: { field: 'environment' } } } }], minimum_should_match: 1 },
  };
  const filter = [env];
  if (params.scope.kind !== 'default') filter.push(...scopeFilter(params.scope, currentCycle));
  if (params.kind !== undefined) filter.push(oneOf('kind', params.kind));
  if (params.q !== undefined) filter.push(toTokensFilter(params.q));
  if (params.ids !== undefined) filter.push(oneOf('id', params.ids));
  return { filter, sort: SOURCE_SORT };
}
