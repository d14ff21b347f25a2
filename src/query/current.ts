/**
 * Current collections (`/v1/current/{collection}`) as request bodies.
 *
 * Entity collections read `current_entities` by collection; characters additionally need
 * chain evidence among their facts (as the reference requires). `ownership` and
 * `route-edges` read `current_relations` by feed. Lists are in label order, ties by id;
 * with `q` in relevance order, ties by id.
 */
import { currentEntities, currentRelations } from '../indices/current.ts';
import type { SortValue } from './cursor.ts';
import type { Profile } from './params.ts';
import { type ListSpec, type Query, type SearchBody, environmentScope, term, toListBody, toSort } from './list.ts';
import type { CycleScope } from './scope.ts';
import { BY_RELEVANCE, toSearchQuery } from './search.ts';

export interface CurrentListParams {
  environment: string;
  scope: CycleScope;
  limit: number;
  q?: string;
  profile?: Profile;
}

const ENTITY_BY_LABEL = toSort(currentEntities, currentEntities.sort);
const RELATION_BY_LABEL = toSort(currentRelations, currentRelations.sort);

/** The current entity rows of a collection in an environment and cycle scope (characters need chain evidence). */
export function currentEntityFilter(collection: string, environment: string, scope: CycleScope, currentCycle: number): Query[] {
  const filter = [term('collection', collection)];
  if (collection === 'characters') filter.push(term('hasEvidence', true));
  return [...filter, ...environmentScope(environment, scope, currentCycle)];
}

export function toCurrentEntityListBody(collection: string, params: CurrentListParams, currentCycle: number, after?: SortValue[]): SearchBody {
  const filter = currentEntityFilter(collection, params.environment, params.scope, currentCycle);
  if (params.profile !== undefined) filter.push(term('placeholder', params.profile === 'placeholder'));
  const spec: ListSpec = { filter, sort: ENTITY_BY_LABEL, limit: params.limit, after };
  if (params.q !== undefined) {
    spec.must = [toSearchQuery(params.q, ['profileText'])];
    spec.sort = BY_RELEVANCE;
  }
  return toListBody(spec);
}

export function toCurrentRelationListBody(collection: string, params: CurrentListParams, currentCycle: number, after?: SortValue[]): SearchBody {
  const filter = [term('collection', collection), ...environmentScope(params.environment, params.scope, currentCycle)];
  const spec: ListSpec = { filter, sort: RELATION_BY_LABEL, limit: params.limit, after };
  if (params.q !== undefined) {
    spec.must = [{ bool: { should: [{ match: { searchText: { query: params.q, operator: 'and' } } }, term('tokens', params.q)], minimum_should_match: 1 } }];
    spec.sort = BY_RELEVANCE;
  }
  return toListBody(spec);
}

/** Rows per collection of a current index, all environments and cycles (the `/metrics` gauges). */
export function toCollectionCountsBody(collections: number): SearchBody {
  return { size: 0, track_total_hits: false, aggs: { collections: { terms: { field: 'collection', size: collections } } } };
}
