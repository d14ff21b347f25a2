/**
 * Answers `group_by` on a list route: the route's own query (filters, scope, `q`,
 * `since`/`until`) aggregated instead of paged (src/query/groups.ts), keys that are ids
 * labelled from their records, and the counts in `meta`: `count` (rows matched, exact: an
 * aggregation reads every row anyway), `groupsCount` and whether it is exact.
 */
import type { IndexName } from '../indices/all.ts';
import type { Row } from '../indices/description.ts';
import {
  type GroupField,
  type GroupKey,
  type Groups,
  readGroups,
  readHistogram,
  readSourceKinds,
  regroup,
  toGroupsBody,
  toHistogramBody,
  toSourceKindsBody,
} from '../query/groups.ts';
import type { Reader } from '../search/search-service.ts';
import { toEnvelope } from '../http/envelope.ts';
import type { AppContext, RouteDeps } from './context.ts';
import { type GroupRequest, type ListRequest, countOf, listMeta } from './list-request.ts';
import { toQuery } from '../query/list.ts';

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

export async function sendGroups(ctx: AppContext, deps: Pick<RouteDeps, 'search' | 'meta'>, request: ListRequest<any>, groups: GroupRequest): Promise<void> {
  const reader = await deps.search.reader();
  ctx.state.generation = reader.generation.generation;
  const query = toQuery(request.query(reader));
  const { by, includeUnknown, limit } = groups;

  if (by.kind === 'histogram') {
    const response = await reader.search(request.index, toHistogramBody(query, by.field));
    const data = readHistogram(response.aggregations, by.field);
    ctx.body = toEnvelope(data, groupsMeta(deps, response.hits.total, { groups: data, groupsCount: data.length, groupsCountIsExact: true }));
    return;
  }

  const field = by.field;
  // Groups mapped through other records are all read first, then mapped, counted and ranked.
  const first = field.through === undefined ? { size: limit, unknown: includeUnknown } : { size: THROUGH_LIMIT, unknown: true };
  const response = await reader.search(request.index, toGroupsBody(query, field, first.size));
  let found = readGroups(response.aggregations, field, first.size, first.unknown);
  if (field.through === 'sourceKind') {
    const kinds = await sourceKinds(reader, found.groups.flatMap((g) => (typeof g.key === 'string' ? [g.key] : [])));
    found = regroup(found.groups, (key) => kinds.get(key as string) || null, limit, includeUnknown);
  }
  ctx.body = toEnvelope(await labelled(reader, field, found.groups), groupsMeta(deps, response.hits.total, found));
}

function groupsMeta(deps: Pick<RouteDeps, 'meta'>, total: Parameters<typeof countOf>[0], found: Groups) {
  return { ...listMeta(deps.meta, countOf(total)), groupsCount: found.groupsCount, groupsCountIsExact: found.groupsCountIsExact };
}
