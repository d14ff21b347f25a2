/**
 * Pure builders of paged list requests: filters, a total sort that ends on a unique field,
 * `size = limit + 1` (the extra row tells whether a next page exists) and `search_after`
 * from a decoded cursor. No Koa, no client, no I/O: parameters in, request body out.
 */
import type { estypes } from '@elastic/elasticsearch';
import { type IndexDescription, NANOS_FORMAT, type SortField } from '../indices/description.ts';
import type { SortKind, SortValue } from './cursor.ts';
import { type CycleScope, scopeCycles } from './scope.ts';

export type Query = estypes.QueryDslQueryContainer;
export type SearchBody = Omit<estypes.SearchRequest, 'index'>;

export { NANOS_FORMAT };

function fieldType(description: Pick<IndexDescription<any>, 'mapping'>, field: string): string | undefined {
  return (description.mapping.mappings.properties[field] as { type?: string } | undefined)?.type;
}

/** An index description's sort as Elasticsearch sort clauses. */
export function toSort(description: Pick<IndexDescription<any>, 'mapping'>, sort: readonly SortField<any>[]): estypes.SortCombinations[] {
  return sort.map(({ field, order }) => {
    if (field === '_score') return { _score: { order } };
    return { [field]: fieldType(description, field) === 'date_nanos' ? { order, format: NANOS_FORMAT } : { order } };
  });
}

/**
 * The kind of value each sort clause yields: a number for `_score`, an instant for a clause with
 * the nanos `format` (every `date_nanos` sort has it), keyword text for the others (a unit test
 * holds every index sort to those types).
 */
export function sortKinds(sort: SearchBody['sort']): SortKind[] {
  const clauses = sort === undefined ? [] : Array.isArray(sort) ? sort : [sort];
  return clauses.map((clause) => {
    if (typeof clause !== 'object' || clause === null) return 'keyword';
    if ('_score' in clause) return 'score';
    const options = Object.values(clause)[0] as { format?: string } | undefined;
    return options?.format === NANOS_FORMAT ? 'instant' : 'keyword';
  });
}

export function term(field: string, value: string | number | boolean): Query {
  return { term: { [field]: value } };
}

export function terms(field: string, values: readonly (string | number)[]): Query {
  return { terms: { [field]: [...values] } };
}

/** An exact filter on one value, or on any of several (`kind=a|b`). */
export function oneOf(field: string, values: readonly string[]): Query {
  return values.length === 1 ? term(field, values[0]!) : terms(field, values);
}

/** The same sort with every clause in the other direction (`occurredAt:asc` of a newest-first index). */
export function reversed(sort: readonly estypes.SortCombinations[]): estypes.SortCombinations[] {
  return sort.map((clause) => {
    const [field, options] = Object.entries(clause as Record<string, { order: 'asc' | 'desc' }>)[0]!;
    return { [field]: { ...options, order: options.order === 'asc' ? 'desc' : 'asc' } };
  });
}

/** The cycle filter of a scope, or none when the scope admits every cycle. */
export function scopeFilter(scope: CycleScope, currentCycle: number): Query[] {
  const cycles = scopeCycles(scope, currentCycle);
  return cycles === undefined ? [] : [terms('cycle', cycles)];
}

/** What every scoped list filters on: one environment and the cycle scope. */
export function environmentScope(environment: string, scope: CycleScope, currentCycle: number): Query[] {
  return [term('environment', environment), ...scopeFilter(scope, currentCycle)];
}

/**
 * Where a page starts and whether it counts: `after` is the decoded cursor position; `count`
 * asks Elasticsearch for the number of matching rows (`true`: exactly; a number: exactly up to
 * it, a lower bound beyond). Pages after the first take their count from the cursor instead.
 */
export interface PagePosition {
  after?: SortValue[];
  count?: boolean | number;
}

/**
 * The query of a list, on its own: what every family's builder answers, and what pages, groups,
 * counts and downloads are all built from (the route never builds a body only to keep a part).
 */
export interface ListQuery {
  /** Filters, each one clause: a facet leaves out the clauses on its own field (`toQuery`). */
  filter: Query[];
  /** Scoring clauses (search); without them the query is a pure filter. */
  must?: Query[];
  sort: estypes.SortCombinations[];
  /**
   * The first sort field is an instant every row has (events and killmails: `occurredAt`, the
   * index sort's, or `indexedAt`): a position may then narrow the query to the range it implies
   * (see `positionRange`).
   */
  indexSorted?: boolean;
}

export interface ListSpec extends ListQuery, PagePosition {
  limit: number;
}

/** The fields a filter clause restricts (leaf queries on fields; `bool`s through their clauses). */
export function clauseFields(clause: Query): Set<string> {
  const fields = new Set<string>();
  const walk = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      if (['term', 'terms', 'range', 'prefix'].includes(key) && value && typeof value === 'object') {
        for (const field of Object.keys(value)) if (field !== 'boost') fields.add(field);
      } else if (key === 'exists' && value && typeof value === 'object') fields.add((value as { field: string }).field);
      else walk(value);
    }
  };
  walk(clause);
  return fields;
}

/**
 * The query of a list as Elasticsearch takes it. With `without`, the filter clauses that restrict
 * only those fields are left out: a facet counts its groups under the other filters, not its own.
 */
export function toQuery(list: Pick<ListQuery, 'filter' | 'must'>, without: readonly string[] = []): Query {
  const filter = without.length === 0 ? list.filter : list.filter.filter((clause) => ![...clauseFields(clause)].every((f) => without.includes(f)) || clauseFields(clause).size === 0);
  return list.must?.length ? { bool: { filter, must: list.must } } : { bool: { filter } };
}

/**
 * The range a position implies on an instant sorted first: a page after `[t, …]` in descending
 * order holds only rows at or before `t`. Elasticsearch applies `search_after` by walking every
 * row before the position (its index-sorted shortcut is for scrolls only): 71 ms for a page
 * 5 M rows deep into 10 M events. This filter, on the field the index is sorted by, is resolved
 * by a binary search over the sorted segments instead (2–6 ms), and changes no result.
 */
function positionRange(sort: estypes.SortCombinations[], after: SortValue[] | undefined): Query[] {
  if (after === undefined || sortKinds(sort)[0] !== 'instant') return [];
  const [field, options] = Object.entries(sort[0] as Record<string, { order: 'asc' | 'desc' }>)[0]!;
  return [{ range: { [field]: { [options.order === 'desc' ? 'lte' : 'gte']: after[0] as string, format: NANOS_FORMAT } } }];
}

export function toListBody(spec: ListSpec): SearchBody {
  // No source filtering: the stored `_source` is the row alone (see mappings), returned as it is.
  const { must, sort, limit, after, count = false } = spec;
  // A counted page counts every matching row, so it cannot be narrowed to its position.
  const narrow = spec.indexSorted === true && count === false;
  const filter = [...spec.filter, ...(narrow ? positionRange(sort, after) : [])];
  const body: SearchBody = {
    query: toQuery({ filter, must }),
    sort,
    size: limit + 1,
    track_total_hits: count,
  };
  if (after !== undefined) body.search_after = after as estypes.FieldValue[];
  return body;
}

/**
 * Which of the ids a request asked for (`id=a|b`) rows of its list hold: the ids' doc values of
 * the matching rows, at most one row per id and field asked, nothing counted.
 */
export function toAskedIdsBody(list: Pick<ListQuery, 'filter' | 'must'>, fields: readonly string[], asked: number): SearchBody {
  return { query: toQuery(list), size: asked * fields.length, _source: false, docvalue_fields: [...fields], track_total_hits: false };
}
