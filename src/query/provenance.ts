/**
 * Provenance lists as request bodies: an entity's facts, relations (as subject or object)
 * and sources, and the `/v1/sources` list. Paged like every list (the reference returned
 * these unbounded: its weak point 6). Not cycle-scoped: provenance shows all evidence.
 */
import { entitySources, facts, relations, sources } from '../indices/provenance.ts';
import type { SortValue } from './cursor.ts';
import { type Query, type SearchBody, term, toListBody, toSort } from './list.ts';

export const FACT_SORT = toSort(facts, facts.sort);
export const RELATION_SORT = toSort(relations, relations.sort);
export const ENTITY_SOURCE_SORT = toSort(entitySources, entitySources.sort);
export const SOURCE_SORT = toSort(sources, sources.sort);

export function toEntityFactsBody(entityId: string, limit: number, after?: SortValue[]): SearchBody {
  return toListBody({ filter: [term('entityId', entityId)], sort: FACT_SORT, limit, after });
}

export function toEntityRelationsBody(entityId: string, limit: number, after?: SortValue[]): SearchBody {
  const either: Query = { bool: { should: [term('subjectEntityId', entityId), term('objectEntityId', entityId)], minimum_should_match: 1 } };
  return toListBody({ filter: [either], sort: RELATION_SORT, limit, after });
}

export function toEntitySourcesBody(entityId: string, limit: number, after?: SortValue[]): SearchBody {
  return toListBody({ filter: [term('entityId', entityId)], sort: ENTITY_SOURCE_SORT, limit, after });
}

/** `/v1/sources`: the environment's sources and those without one, as the reference does. */
export function toSourceListBody(environment: string, limit: number, after?: SortValue[]): SearchBody {
  const env: Query = {
    bool: { should: [term('environment', environment), { bool: { must_not: { exists: { field: 'environment' } } } }], minimum_should_match: 1 },
  };
  return toListBody({ filter: [env], sort: SOURCE_SORT, limit, after });
}
