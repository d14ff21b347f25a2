/**
 * Answers `group_by` on a list route: the route's own query (filters, scope, `q`,
 * `since`/`until`) aggregated instead of paged (src/query/groups.ts), keys that are ids
 * labelled from their records, and the counts in `meta`: `count` (rows matched, exact: an
 * aggregation reads every row anyway), `groupsCount` and whether it is exact, and whether the
 * groups are (on several shards a second read makes them so; else `groupsErrorBound`). Several
 * groupings at once are facets: each counted under the route's other filters but not its own
 * (a chip of another type stays countable once one type is picked), answered by name, their
 * counts in `meta.facets`, all from one request (src/query/groups.ts: toFacetsBody).
 */
import type { IndexName } from '../indices/all.ts';
import type { Row } from '../indices/description.ts';
import {
  type GroupField,
  type GroupKey,
  type Grouping,
  type Groups,
  ownFilterFields,
  readGroups,
  readHistogram,
  readFacet,
  readSourceKinds,
  regroup,
  toFacetsBody,
  toGroupsBody,
  toHistogramBody,
  toSourceKindsBody,
} from '../query/groups.ts';
import type { Reader } from '../search/search-service.ts';
import { type Meta, toEnvelope } from '../http/envelope.ts';
import { type AppContext, type RouteDeps, metaOf, requestReader } from './context.ts';
import { type GroupRequest, type ListRequest, countOf, listMeta } from './list-request.ts';
import { type Query, type SearchBody, toQuery } from '../query/list.ts';

/** Distinct first keys read when groups are mapped through other records (an entity's facts by source). */
const THROUGH_LIMIT = 10_000;

/** The label of a record a key names: an entity's display name, else its name; a source's title. */
const LABELS: Record<NonNullable<GroupField['labels']>, { index: IndexName; label: (row: Row) => unknown }> = {
  entities: { index: 'entities', label: (row) => row.displayName || row.name },
  sources: { index: 'sources', label: (row) => row.title },
};

/** Labels of id keys from their records (null when the registry has no such record); other keys label themselves. */
async function labelled(reader: Reader, field: GroupField, groups: Groups['groups']) {
  let labels = new Map<GroupKey, string>();
  if (field.labels !== undefined) {
    const { index, label } = LABELS[field.labels];
    const ids = groups.flatMap((g) => (typeof g.key === 'string' ? [g.key] : []));
    const rows = await reader.getMany<{ row: Row }>(index, ids);
    labels = new Map(
      rows.flatMap(({ row }) => {
        const text = label(row);
        return typeof text === 'string' && text !== '' ? [[row.id as string, text] as const] : [];
      }),
    );
  }
  return groups.map(({ key, count }) => ({
    key,
    label: key === null ? null : field.labels === undefined ? String(key) : (labels.get(key) ?? null),
    count,
  }));
}

/**
 * Facts' source kinds: the kind of each source id a group names, from the sources file, else
 * from the entities' own sources (a source may be listed only there, as the explorer shows it).
 */
async function sourceKinds(reader: Reader, ids: string[]): Promise<Map<string, string>> {
  const rows = await reader.getMany<{ row: Row }>('sources', ids);
  const kinds = new Map(rows.flatMap(({ row }) => {
    const kind = row.sourceKind ?? row.kind;
    return typeof kind === 'string' && kind !== '' ? [[row.id as string, kind] as const] : [];
  }));
  const missing = ids.filter((id) => !kinds.has(id));
  if (missing.length === 0) return kinds;
  const response = await reader.search('entity_sources', toSourceKindsBody(missing));
  for (const [id, kind] of readSourceKinds(response.aggregations)) kinds.set(id, kind);
  return kinds;
}

/**
 * The groups a field's aggregation reads: the groups asked for, or, for groups mapped through
 * other records, all of them (unknown included), which are then mapped, counted and ranked.
 */
function firstRead(field: GroupField, limit: number, includeUnknown: boolean): { size: number; unknown: boolean } {
  return field.through === undefined ? { size: limit, unknown: includeUnknown } : { size: THROUGH_LIMIT, unknown: true };
}

/** The aggregation request of one grouping over `query` (terms or a histogram). */
function groupingBody(query: Query | undefined, by: Grouping, limit: number, includeUnknown: boolean): SearchBody {
  if (by.kind === 'histogram') return toHistogramBody(query, by.field);
  return toGroupsBody(query, by.field, firstRead(by.field, limit, includeUnknown).size);
}

/**
 * One grouping's groups (histogram buckets) and counts from its aggregations over `query`, keys
 * mapped and labelled. Terms that could not be proven exact are read once more, with every
 * shard sending all its terms (src/query/groups.ts: `cover`).
 */
async function groupsFrom(reader: Reader, index: IndexName, query: Query | undefined, by: Grouping, aggregations: unknown, includeUnknown: boolean, limit: number): Promise<{ data: unknown[]; found: Groups }> {
  if (by.kind === 'histogram') {
    const data = readHistogram(aggregations, by.field);
    return { data, found: { groups: data, groupsCount: data.length, groupsCountIsExact: true, groupsAreExact: true } };
  }
  const field = by.field;
  const first = firstRead(field, limit, includeUnknown);
  let found = readGroups(aggregations, field, first.size, first.unknown);
  if (found.cover !== undefined) {
    const whole = await reader.search(index, toGroupsBody(query, field, first.size, found.cover));
    found = readGroups(whole.aggregations, field, first.size, first.unknown);
  }
  if (field.through === 'sourceKind') {
    const kinds = await sourceKinds(reader, found.groups.flatMap((g) => (typeof g.key === 'string' ? [g.key] : [])));
    found = regroup(found, (key) => kinds.get(key as string) || null, limit, includeUnknown);
  }
  return { data: await labelled(reader, field, found.groups), found };
}

/** What `meta` says of a grouping's groups: how many, and whether they and their count are exact (else the bound). */
const exactness = (found: Groups) => ({
  groupsCount: found.groupsCount,
  groupsCountIsExact: found.groupsCountIsExact,
  groupsAreExact: found.groupsAreExact,
  ...(found.groupsErrorBound !== undefined && { groupsErrorBound: found.groupsErrorBound }),
});

export async function sendGroups(ctx: AppContext, deps: Pick<RouteDeps, 'search' | 'meta'>, request: ListRequest<any>, groups: GroupRequest): Promise<void> {
  const reader = await requestReader(ctx, deps.search);
  const list = request.query(reader.generation);
  const { by, includeUnknown, limit } = groups;
  if (by.length === 1) {
    const query = toQuery(list);
    const response = await reader.search(request.index, groupingBody(query, by[0]!, limit, includeUnknown));
    const { data, found } = await groupsFrom(reader, request.index, query, by[0]!, response.aggregations, includeUnknown, limit);
    ctx.body = toEnvelope(data, groupsMeta(metaOf(ctx, deps), response.hits.total, found));
    return;
  }
  // Facets, in one request: each counted under the other filters, not its own; meta.count under all of them.
  const names = by.map((grouping) => grouping.field.name);
  const specs = by.map((grouping, i) => {
    const query = toQuery(list, ownFilterFields(grouping));
    return { name: names[i]!, query, aggs: groupingBody(query, grouping, limit, includeUnknown).aggs! };
  });
  const response = await reader.search(request.index, toFacetsBody(toQuery(list), specs));
  const facets = await Promise.all(
    by.map(async (grouping, i) => {
      const { aggregations, count } = readFacet(response.aggregations, names[i]!);
      return { count, ...(await groupsFrom(reader, request.index, specs[i]!.query, grouping, aggregations, includeUnknown, limit)) };
    }),
  );
  ctx.body = toEnvelope(
    Object.fromEntries(facets.map((facet, i) => [names[i], facet.data])),
    listMeta(metaOf(ctx, deps), countOf(response.hits.total), {
      facets: Object.fromEntries(facets.map((facet, i) => [names[i], { count: facet.count, ...exactness(facet.found) }])),
    }),
  );
}

function groupsMeta(meta: Meta, total: Parameters<typeof countOf>[0], found: Groups) {
  return { ...listMeta(meta, countOf(total)), ...exactness(found) };
}
