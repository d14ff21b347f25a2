/**
 * Entity lists (`/v1/entities`, `/v1/search`, typed collections) and entity lookups as
 * Elasticsearch request bodies. Pure: validated parameters in, body out.
 *
 * Lists are in label order (display name, else name, else id; case-insensitive), ties by
 * id; with `q` they are in relevance order, ties by id. `sort` picks another of `ENTITY_SORTS`.
 */
import { entities } from '../indices/entities.ts';
import { type ListQuery, type ListSpec, NANOS_FORMAT, type PagePosition, type Query, type SearchBody, environmentScope, oneOf, term, toListBody, toSort } from './list.ts';
import type { AnyOf, Profile } from './route-parameters.ts';
import type { CycleScope } from './scope.ts';
import { BY_RELEVANCE, toSearchQuery } from './search.ts';
import { type TimeBound, toTimeRange } from './time-range.ts';

export interface EntityListParams {
  environment: string;
  scope: CycleScope;
  limit: number;
  q?: string;
  entityType?: AnyOf;
  profile?: Profile;
  /** Default: `relevance` with `q`, else `label:asc`. */
  sort?: EntitySort;
  /** Only static types: entities whose id ends in `:type:<typeId>` (`/v1/types`). */
  staticTypes?: boolean;
  /** Only entities updated at or after this instant. */
  updatedSince?: TimeBound;
  /** Only these entities, by id or slug (`id=a|b`). */
  ids?: AnyOf;
}

/** The orders of entity lists (and current collections); `relevance` needs `q`. */
export const ENTITY_SORTS = ['label:asc', 'updatedAt:desc', 'relevance'] as const;
export type EntitySort = (typeof ENTITY_SORTS)[number];

const BY_LABEL = toSort(entities, entities.sort);
/**
 * Most recently updated first. Rows without `updatedAt` sort as the epoch (`missing: 0`), last:
 * a position then holds a real instant, which `missing: _last` would not give back.
 */
const BY_UPDATE: ListSpec['sort'] = [{ updatedAt: { order: 'desc', format: NANOS_FORMAT, missing: 0 } }, { id: { order: 'asc' } }];

/** The sort clauses of an entity-list order (the label sort of the index searched). */
export function entitySort(sort: EntitySort, byLabel: ListSpec['sort']): ListSpec['sort'] {
  if (sort === 'relevance') return BY_RELEVANCE;
  return sort === 'updatedAt:desc' ? BY_UPDATE : byLabel;
}

/** A list query with `q` scoring (when given) and the requested order. */
export function searchable<T extends ListQuery>(spec: T, q: string | undefined, sort: EntitySort | undefined, search: (q: string) => Query): T {
  if (q !== undefined) spec.must = [search(q)];
  spec.sort = entitySort(sort ?? (q === undefined ? 'label:asc' : 'relevance'), spec.sort);
  return spec;
}

export function toEntityListQuery(params: Omit<EntityListParams, 'limit'>, currentCycle: number): ListQuery {
  const filter: Query[] = environmentScope(params.environment, params.scope, currentCycle);
  if (params.entityType !== undefined) filter.push(oneOf('entityType', params.entityType));
  if (params.profile !== undefined) filter.push(term('placeholder', params.profile === 'placeholder'));
  if (params.staticTypes) filter.push({ exists: { field: 'typeId' } });
  filter.push(...toTimeRange('updatedAt', params.updatedSince, undefined));
  if (params.ids !== undefined) filter.push({ bool: { should: [oneOf('id', params.ids), oneOf('slug', params.ids)], minimum_should_match: 1 } });
  return searchable({ filter, sort: BY_LABEL }, params.q, params.sort, (q) => toSearchQuery(q));
}

export function toEntityListBody(params: EntityListParams, currentCycle: number, page: PagePosition = {}): SearchBody {
  return toListBody({ ...toEntityListQuery(params, currentCycle), limit: params.limit, ...page });
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
