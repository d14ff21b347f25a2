/**
 * `group_by`: the groups of the matching rows instead of the rows (OpenAlex's `group_by`,
 * Crossref's facets), and histograms of instants per UTC day, week or month. Pure: the
 * route's own query in, an aggregation body out; an aggregation answer in, groups out.
 *
 * Groups are exact on any number of shards, or say they are not. Each shard sends its top
 * `shard_size` terms, and the merged counts are exact where every shard that holds a term sent
 * it; Elasticsearch bounds what may be missing (`doc_count_error_upper_bound`: the sum of the
 * last count of every shard that sent all it was asked for, 0 on one shard). `topIsExact` proves
 * from those bounds that the top groups are exact in count and order; where it cannot, the route
 * reads again with a `shard_size` past the field's distinct values (`cover`), which every shard
 * answers whole. Past MAX_SHARD_SIZE the answer says it is not exact (`groupsAreExact: false`)
 * and how far off a count may be (`groupsErrorBound`).
 * `groupsCount` is exact when every group came back (no row left in `sum_other_doc_count`);
 * past the groups returned it is the `cardinality` estimate and says so (`groupsCountIsExact`).
 * A row without a value is in no group, unless `include_unknown=true` asks for it as one group
 * with `key: null`.
 */
import type { estypes } from '@elastic/elasticsearch';
import { ApiError } from '../errors.ts';
import { UNCYCLED } from '../indices/cycle.ts';
import { MAX_FACETS } from '../limits/request-cost.ts';
import type { Query, SearchBody } from './list.ts';
import { literalPattern, queryParameter } from './parameters.ts';

/** Groups answered at most (and when `group_by` comes without `limit`). */
export const MAX_GROUPS = 200;
/** Histogram buckets answered at most, empty ones included. */
export const MAX_BUCKETS = 1000;
/**
 * The most terms a shard is asked for: a field with more distinct values than this is not read
 * whole, and its groups carry their error bound when they cannot be proven. Below
 * `search.max_buckets` (65,536), which a shard's answer counts against.
 */
export const MAX_SHARD_SIZE = 50_000;
/** Precision of the `cardinality` estimate of `groupsCount` (Elasticsearch's highest). */
const CARDINALITY_PRECISION = 40_000;

/** A field rows can be grouped by: its name in `group_by` and the indexed field behind it. */
export interface GroupField {
  readonly name: string;
  readonly field: string;
  /** Numeric and boolean keys are answered as numbers and booleans. */
  readonly type: 'keyword' | 'integer' | 'boolean';
  /** Keys are ids of these records: each group carries the record's label. */
  readonly labels?: 'entities' | 'sources';
  /** The indexed value that means "none" (cycle 0: uncycled); else a missing field. */
  readonly none?: number;
  /** Keys are mapped through another record before counting (facts by their source's kind). */
  readonly through?: 'sourceKind';
  /** The indexed fields of the route's filter on this field, when not `field` itself (a facet leaves it out). */
  readonly filters?: readonly string[];
}

/** A histogram of an instant field: `<name>:day|week|month`. */
export interface HistogramField {
  readonly name: string;
  readonly field: string;
  readonly interval: Interval;
}

export const INTERVALS = ['day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

export type Grouping = { kind: 'terms'; field: GroupField } | { kind: 'histogram'; field: HistogramField };

export type GroupKey = string | number | boolean | null;

/** One group of an answer. */
export interface Group {
  key: GroupKey;
  label: string | null;
  count: number;
}

/** What the groups of a `terms` answer are, before labels. */
export interface Groups {
  groups: { key: GroupKey; count: number }[];
  groupsCount: number;
  groupsCountIsExact: boolean;
  /** Every group answered has its exact count, and no group missing would rank among them. */
  groupsAreExact: boolean;
  /** When not exact: the most a count answered may be short of, and a group left out may hold. */
  groupsErrorBound?: number;
  /** When not exact: the `shard_size` of a read that every shard answers whole, if it is within MAX_SHARD_SIZE. */
  cover?: number;
}

/** Fields of the records every route can group by, by name. */
export const cycleGroup: GroupField = { name: 'cycle', field: 'cycle', type: 'integer', none: UNCYCLED };
export const keyword = (name: string, field = name, labels?: GroupField['labels']): GroupField => ({ name, field, type: 'keyword', ...(labels && { labels }) });

/** Facets one `group_by` may ask for at once: each is charged as an aggregation of its own. */
export { MAX_FACETS };

/** The indexed fields a grouping's own filter restricts: a facet is counted without them. */
export function ownFilterFields(grouping: Grouping): readonly string[] {
  return grouping.kind === 'histogram' ? [grouping.field.field] : (grouping.field.filters ?? [grouping.field.field]);
}

/** `group_by` of a route: one of its fields (and histograms), or up to MAX_FACETS of them comma-separated, validated and documented. */
export function groupByParameter(fields: readonly GroupField[], histogramOf?: string) {
  const histograms: HistogramField[] = histogramOf === undefined ? [] : INTERVALS.map((interval) => ({ name: `${histogramOf}:${interval}`, field: histogramOf, interval }));
  const names = [...fields.map((f) => f.name), ...histograms.map((h) => h.name)];
  const histogramWords = histogramOf === undefined ? '' : ` \`${histogramOf}:day|week|month\`: rows per UTC calendar day, week (from Monday) or month, in time order with empty buckets as 0 (at most ${MAX_BUCKETS}).`;
  const one = `(?:${names.map(literalPattern).join('|')})`;
  const grouping = (name: string): Grouping => {
    const field = fields.find((f) => f.name === name);
    return field ? { kind: 'terms', field } : { kind: 'histogram', field: histograms.find((h) => h.name === name)! };
  };
  return queryParameter('group_by', {
    description:
      `Answer the groups of the matching rows, \`{key, label, count}\` by count then key (at most \`limit\`, default and maximum ${MAX_GROUPS}), instead of rows: one of \`${names.join('`, `')}\`.${histogramWords} ` +
      `Up to ${MAX_FACETS} of them, comma-separated, answer several facets at once: \`data\` is then an object of group lists by name, each facet counted under the other filters but not its own (as a sidebar shows them), with its counts in \`meta.facets\`. Not with \`cursor\` or \`select\`.`,
    // No examples: a generator tries every parameter's examples together, and group_by excludes
    // select, format, include and cursor (the pattern lists every name already).
    schema: { type: 'string', pattern: `^${one}(?:,${one}){0,${MAX_FACETS - 1}}$` },
    expects: `one of ${names.join(', ')}, or up to ${MAX_FACETS} of them comma-separated`,
    excludes: 'cursor',
    convert: (text): Grouping[] => {
      const asked = text.split(',');
      if (new Set(asked).size !== asked.length) throw ApiError.badParameter('group_by', `group_by names ${asked.find((n, i) => asked.indexOf(n) !== i)} twice.`);
      return asked.map(grouping);
    },
  });
}

/**
 * Terms merged from the shards for `size` groups: more than asked for, so that what ranks just
 * below the top can be bounded too (Elasticsearch's own heuristic for `shard_size`).
 */
export const candidatesFor = (size: number): number => Math.ceil(size * 1.5) + 10;

/**
 * The `shard_size` at which every shard sends all its terms of a field with about `distinct`
 * values (the `cardinality` estimate, with room for its error); undefined past MAX_SHARD_SIZE.
 */
export function coveringShardSize(distinct: number): number | undefined {
  const size = Math.ceil(distinct * 1.1) + 100;
  return size <= MAX_SHARD_SIZE ? size : undefined;
}

/**
 * The aggregation request of `group_by=<field>` over the route's query: the top `size` groups by
 * count, then key, with what each shard may have left out (`shardSize`: a covering read's).
 */
export function toGroupsBody(query: Query | undefined, group: GroupField, size: number, shardSize?: number): SearchBody {
  const candidates = candidatesFor(size);
  const terms: estypes.AggregationsTermsAggregation = {
    field: group.field,
    size: candidates,
    shard_size: Math.max(candidates, shardSize ?? 0),
    show_term_doc_count_error: true,
    order: [{ _count: 'desc' }, { _key: 'asc' }],
  };
  if (group.none !== undefined) terms.exclude = [String(group.none)];
  const none: estypes.AggregationsAggregationContainer =
    group.none === undefined ? { missing: { field: group.field } } : { filter: { term: { [group.field]: group.none } } };
  return {
    ...(query && { query }),
    size: 0,
    track_total_hits: true,
    aggs: {
      groups: { terms },
      groupsCount: { cardinality: { field: group.field, precision_threshold: CARDINALITY_PRECISION } },
      none,
    },
  };
}

/** One merged term: its count so far, and how much it may be short (`show_term_doc_count_error`). */
export interface TermBucket {
  key: string | number;
  key_as_string?: string;
  doc_count: number;
  doc_count_error_upper_bound?: number;
}

interface TermsAnswer {
  groups: { buckets: TermBucket[]; sum_other_doc_count?: number; doc_count_error_upper_bound?: number };
  groupsCount: { value: number };
  none: { doc_count: number };
}

/** A bucket key as the API answers it: booleans as booleans, numbers as numbers. */
function keyOf(group: GroupField, bucket: { key: string | number; key_as_string?: string }): GroupKey {
  if (group.type === 'boolean') return bucket.key_as_string === 'true' || bucket.key === 1;
  return bucket.key;
}

/**
 * Keys in Elasticsearch's order, the unknown one last: text by its UTF-8 bytes, as a terms
 * aggregation orders it (JS's `<` compares UTF-16 units, which puts U+E000–U+FFFF after the
 * characters beyond U+FFFF), and numbers and booleans by value.
 */
export function compareKeys(a: GroupKey, b: GroupKey): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  if (typeof a === 'string' && typeof b === 'string') return Buffer.compare(Buffer.from(a), Buffer.from(b));
  return a < b ? -1 : 1;
}

/** Sorts groups by count descending, then key ascending (the unknown group last among equals), and keeps `limit`. */
export function rankGroups<G extends { key: GroupKey; count: number }>(groups: G[], limit: number): G[] {
  return groups.sort((a, b) => b.count - a.count || compareKeys(a.key, b.key)).slice(0, limit);
}

/**
 * Whether the first `limit` of the merged terms (in Elasticsearch's order: count so far, then
 * key) are the true top `limit` with their true counts. `errorBound` is the answer's
 * `doc_count_error_upper_bound`, `candidates` the terms the merge kept at most. Each of the top
 * must be short of nothing; every other term must stay below the last of them: a term merged
 * but ranked lower by at most its own error, a term the merge cut (when it kept `candidates`) by
 * at most the last count plus the bound, and a term no shard sent by at most the bound.
 */
export function topIsExact(buckets: readonly TermBucket[], errorBound: number, limit: number, candidates: number): boolean {
  if (errorBound === 0) return true;
  if (buckets.length < limit) return false;
  const top = buckets.slice(0, limit);
  if (top.some((b) => (b.doc_count_error_upper_bound ?? errorBound) !== 0)) return false;
  const last = top.at(-1)!.doc_count;
  const below = buckets.slice(limit).map((b) => (b.doc_count_error_upper_bound === 0 ? 0 : b.doc_count + (b.doc_count_error_upper_bound ?? errorBound)));
  const cut = buckets.length >= candidates ? buckets.at(-1)!.doc_count + errorBound : 0;
  return Math.max(errorBound, cut, ...below) < last;
}

/**
 * The groups of a `toGroupsBody` answer: the top `limit`, the unknown group merged in when asked
 * for; whether they are exact (`topIsExact`), else their bound and the read that would be.
 */
export function readGroups(aggregations: unknown, group: GroupField, limit: number, includeUnknown: boolean): Groups {
  const answer = aggregations as TermsAnswer;
  const buckets = answer.groups.buckets;
  const known = buckets.map((bucket) => ({ key: keyOf(group, bucket), count: bucket.doc_count }));
  const unknown = includeUnknown && answer.none.doc_count > 0 ? [{ key: null, count: answer.none.doc_count }] : [];
  // No row left over: every group came back, each with every row.
  const complete = (answer.groups.sum_other_doc_count ?? 0) === 0;
  // The estimate counts the "none" value of a field that has one (cycle 0) as a distinct value.
  const estimate = answer.groupsCount.value - (group.none !== undefined && answer.none.doc_count > 0 ? 1 : 0);
  const errorBound = answer.groups.doc_count_error_upper_bound ?? 0;
  const exact = complete || topIsExact(buckets, errorBound, limit, candidatesFor(limit));
  const cover = exact ? undefined : coveringShardSize(answer.groupsCount.value);
  return {
    groups: rankGroups([...known, ...unknown], limit),
    groupsCount: (complete ? known.length : Math.max(estimate, known.length)) + unknown.length,
    groupsCountIsExact: complete,
    groupsAreExact: exact,
    ...(!exact && { groupsErrorBound: errorBound }),
    ...(cover !== undefined && { cover }),
  };
}

/**
 * Groups whose keys are mapped through other records before counting (facts by the kind of
 * their source): exact when every group of the first key was read (`first`), each exactly.
 */
export function regroup(first: Groups, mapKey: (key: GroupKey) => GroupKey, limit: number, includeUnknown: boolean): Groups {
  const { groups } = first;
  const exact = first.groupsCountIsExact;
  const counts = new Map<GroupKey, number>();
  for (const { key, count } of groups) {
    const mapped = key === null ? null : mapKey(key);
    counts.set(mapped, (counts.get(mapped) ?? 0) + count);
  }
  if (!includeUnknown) counts.delete(null);
  const all = [...counts].map(([key, count]) => ({ key, count }));
  return {
    groups: rankGroups(all, limit),
    groupsCount: all.length,
    groupsCountIsExact: exact,
    groupsAreExact: exact,
    ...(!exact && { groupsErrorBound: first.groupsErrorBound ?? 0 }),
  };
}

/**
 * The kind of each source id as an entity's sources give it (`entity_sources`), for sources the
 * `sources` file does not list: the most common kind per id.
 */
export function toSourceKindsBody(sourceIds: readonly string[]): SearchBody {
  return {
    query: { terms: { sourceId: [...sourceIds] } },
    size: 0,
    track_total_hits: false,
    aggs: { ids: { terms: { field: 'sourceId', size: sourceIds.length }, aggs: { kind: { terms: { field: 'kind', size: 1 } } } } },
  };
}

/** Source id → kind from a `toSourceKindsBody` answer. */
export function readSourceKinds(aggregations: unknown): Map<string, string> {
  const ids = (aggregations as { ids: { buckets: { key: string; kind: { buckets: { key: string }[] } }[] } }).ids.buckets;
  return new Map(ids.flatMap((b) => (b.kind.buckets[0] ? [[b.key, b.kind.buckets[0].key] as const] : [])));
}

/** The aggregation request of a histogram: non-empty UTC calendar buckets keyed by their first day. */
export function toHistogramBody(query: Query | undefined, histogram: HistogramField): SearchBody {
  return {
    ...(query && { query }),
    size: 0,
    track_total_hits: true,
    aggs: {
      buckets: {
        date_histogram: { field: histogram.field, calendar_interval: histogram.interval, format: 'yyyy-MM-dd', time_zone: 'UTC', min_doc_count: 1 },
      },
    },
  };
}

/** One facet of a several-field `group_by`: its name, the route's query without its own filter, and the aggregations of its single-field body. */
export interface FacetSpec {
  name: string;
  query: Query | undefined;
  aggs: NonNullable<SearchBody['aggs']>;
}

/**
 * Several facets in one request. The route's whole query selects the rows `meta.count` counts;
 * a facet whose query is that same query (no filter of its own was asked for) aggregates those
 * rows, and one that leaves its own filter out aggregates, from all rows (`global`), those its
 * query matches — in filter context, unscored. Each facet's aggregations sit under `facet`.
 */
export function toFacetsBody(query: Query | undefined, facets: readonly FacetSpec[]): SearchBody {
  const all = JSON.stringify(query ?? null);
  const everything = { match_all: {} };
  const aggs: Record<string, estypes.AggregationsAggregationContainer> = {};
  for (const facet of facets) {
    const own = JSON.stringify(facet.query ?? null) !== all;
    // The same two levels either way, so that readFacet finds every facet under `facet`.
    const scope = own ? { global: {} } : { filter: everything };
    aggs[facet.name] = { ...scope, aggs: { facet: { filter: own ? (facet.query ?? everything) : everything, aggs: facet.aggs } } };
  }
  return { ...(query && { query }), size: 0, track_total_hits: true, aggs };
}

/** A facet's aggregations in a `toFacetsBody` answer, and the rows it counted. */
export function readFacet(aggregations: unknown, name: string): { aggregations: unknown; count: number } {
  const facet = (aggregations as Record<string, { facet: { doc_count: number } }>)[name]!.facet;
  return { aggregations: facet, count: facet.doc_count };
}

/** The first day of the bucket after the one starting at `day` (`YYYY-MM-DD`, UTC). */
function nextBucket(day: string, interval: Interval): string {
  const date = new Date(`${day}T00:00:00Z`);
  if (interval === 'day') date.setUTCDate(date.getUTCDate() + 1);
  else if (interval === 'week') date.setUTCDate(date.getUTCDate() + 7);
  else date.setUTCMonth(date.getUTCMonth() + 1);
  return date.toISOString().slice(0, 10);
}

/** Buckets from the one starting at `first` to the one starting at `last`, both included. */
function bucketsBetween(first: string, last: string, interval: Interval): number {
  const [a, b] = [new Date(`${first}T00:00:00Z`), new Date(`${last}T00:00:00Z`)];
  if (interval === 'month') return (b.getUTCFullYear() - a.getUTCFullYear()) * 12 + b.getUTCMonth() - a.getUTCMonth() + 1;
  return Math.round((b.getTime() - a.getTime()) / 86_400_000 / (interval === 'week' ? 7 : 1)) + 1;
}

/**
 * The buckets of a `toHistogramBody` answer, every empty bucket between the first and the last
 * filled in with 0; more than `MAX_BUCKETS` is a 400 asking for a coarser interval.
 */
export function readHistogram(aggregations: unknown, histogram: HistogramField): Group[] {
  const buckets = (aggregations as { buckets: { buckets: { key_as_string: string; doc_count: number }[] } }).buckets.buckets;
  if (buckets.length === 0) return [];
  const counts = new Map(buckets.map((b) => [b.key_as_string, b.doc_count]));
  const first = buckets[0]!.key_as_string;
  const total = bucketsBetween(first, buckets.at(-1)!.key_as_string, histogram.interval);
  if (total > MAX_BUCKETS) {
    const coarser = histogram.interval === 'month' ? 'narrow since/until' : `ask for ${histogram.interval === 'day' ? 'week or month' : 'month'} buckets or narrow since/until`;
    throw ApiError.badParameter('group_by', `group_by=${histogram.name} spans ${total} buckets, more than ${MAX_BUCKETS}: ${coarser}.`);
  }
  const filled: Group[] = [];
  for (let day = first, i = 0; i < total; day = nextBucket(day, histogram.interval), i += 1) {
    filled.push({ key: day, label: day, count: counts.get(day) ?? 0 });
  }
  return filled;
}
