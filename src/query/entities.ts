/**
 * Entity lists (`/v1/entities`, `/v1/search`, typed collections) and entity lookups as
 * Elasticsearch request bodies. Pure: validated parameters in, body out.
 *
 * Lists are in label order (display name, else name, else id; case-insensitive), ties by
 * id; with `q` they are in relevance order, ties by id.
 */
import { entities } from '../indices/entities.ts';
import type { SortValue } from './cursor.ts';
import { type ListSpec, type Query, type SearchBody, environmentScope, term, toListBody, toSort } from './list.ts';
import type { Profile } from './params.ts';
import type { CycleScope } from './scope.ts';
import { BY_RELEVANCE, toSearchQuery } from './search.ts';

export interface EntityListParams {
  environment: string;
  scope: CycleScope;
  limit: number;
  q?: string;
  entityType?: string;
  profile?: Profile;
  /** Only static types: entities whose id ends in `:type:<typeId>` (`/v1/types`). */
  staticTypes?: boolean;
}

const BY_LABEL = toSort(entities, entities.sort);

export function toEntityListBody(params: EntityListParams, currentCycle: number, after?: SortValue[]): SearchBody {
  const filter: Query[] = environmentScope(params.environment, params.scope, currentCycle);
  if (params.entityType !== undefined) filter.push(term('entityType', params.entityType));
  if (params.profile !== undefined) filter.push(term('placeholder', params.profile === 'placeholder'));
  if (params.staticTypes) filter.push({ exists: { field: 'typeId' } });
  const spec: ListSpec = { filter, sort: BY_LABEL, limit: params.limit, after };
  if (params.q !== undefined) {
    spec.must = [toSearchQuery(params.q)];
    spec.sort = BY_RELEVANCE;
  }
  return toListBody(spec);
}

/** One entity by id or slug (ids win over slugs), optionally of one type. Not scoped. */
export function toEntityLookupBody(idOrSlug: string, entityType?: string): SearchBody {
  const filter: Query[] = [{ bool: { should: [term('id', idOrSlug), term('slug', idOrSlug)], minimum_should_match: 1 } }];
  if (entityType !== undefined) filter.push(term('entityType', entityType));
  return {
    query: { bool: { filter, should: [{ term: { id: { value: idOrSlug, boost: 2 } } }] } },
    size: 1,
    track_total_hits: false,
  };
}

/** A static type by its numeric type id in one environment (`/v1/types/{typeId}`); the lowest id wins a tie. */
export function toStaticTypeLookupBody(typeId: string, environment: string): SearchBody {
  return {
    query: { bool: { filter: [term('typeId', typeId), term('environment', environment)] } },
    sort: [{ id: { order: 'asc' } }],
    size: 1,
    track_total_hits: false,
  };
}
