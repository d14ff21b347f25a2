/**
 * Current collections (`/v1/current/{collection}`) as request bodies.
 *
 * Entity collections read `current_entities` by collection; characters additionally need
 * chain evidence among their facts (as the reference requires). `ownership` and
 * `route-edges` read `current_relations` by feed. Lists are in label order, ties by id;
 * with `q` in relevance order, ties by id.
 */
import { currentEntities, currentRelations } from '../indices/current.ts';
import { type EntitySort, searchable } from './entities.ts';
import type { Profile } from './route-parameters.ts';
import { type ListQuery, type PagePosition, type Query, type SearchBody, environmentScope, term, toListBody, toSort } from './list.ts';
import type { CycleScope } from './scope.ts';
import { toSearchQuery } from './search.ts';

export interface CurrentListParams {
  environment: string;
  scope: CycleScope;
  limit: number;
  q?: string;
  profile?: Profile;
  sort?: EntitySort;
}

const ENTITY_BY_LABEL = toSort(currentEntities, currentEntities.sort);
const RELATION_BY_LABEL = toSort(currentRelations, currentRelations.sort);

/** The current entity rows of a collection in an environment and cycle scope (characters need chain evidence). */
export function currentEntityFilter(collection: string, environment: string, scope: CycleScope, currentCycle: number): Query[] {
  const filter = [term('collection', collection)];
  if (collection === 'characters') filter.push(term('hasEvidence', true));
  return [...filter, ...environmentScope(environment, scope, currentCycle)];
}

export function toCurrentEntityListQuery(collection: string, params: Omit<CurrentListParams, 'limit'>, currentCycle: number): ListQuery {
  const filter = currentEntityFilter(collection, params.environment, params.scope, currentCycle);
  if (params.profile !== undefined) filter.push(term('placeholder', params.profile === 'placeholder'));
  return searchable({ filter, sort: ENTITY_BY_LABEL }, params.q, params.sort, (q) => toSearchQuery(q, ['profileText']));
}

export function toCurrentEntityListBody(collection: string, params: CurrentListParams, currentCycle: number, page: PagePosition = {}): SearchBody {
  return toListBody({ ...toCurrentEntityListQuery(collection, params, currentCycle), limit: params.limit, ...page });
}

/** Relation feeds have no `updatedAt`: label order, or relevance with `q`. */
export const RELATION_SORTS = ['label:asc', 'relevance'] as const;

export function toCurrentRelationListQuery(collection: string, params: Omit<CurrentListParams, 'limit'>, currentCycle: number): ListQuery {
  const filter = [term('collection', collection), ...environmentScope(params.environment, params.scope, currentCycle)];
  const search = (q: string): Query => ({
    bool: { should: [{ match: { searchText: { query: q, operator: 'and' } } }, term('tokens', q)], minimum_should_match: 1 },
  });
  return searchable({ filter, sort: RELATION_BY_LABEL }, params.q, params.sort, search);
}

export function toCurrentRelationListBody(collection: string, params: CurrentListParams, currentCycle: number, page: PagePosition = {}): SearchBody {
  return toListBody({ ...toCurrentRelationListQuery(collection, params, currentCycle), limit: params.limit, ...page });
}

/** Rows per collection of a current index, all environments and cycles (the `/metrics` gauges). */
export function toCollectionCountsBody(collections: number): SearchBody {
  return { size: 0, track_total_hits: false, aggs: { collections: { terms: { field: 'collection', size: collections } } } };
}
