/**
 * Answers one page of a list route: decodes the cursor for this route and its filters, reads
 * the generation the cursor came from (or the live one), fetches `limit + 1` rows and hands
 * out the next cursor from the sort values of the last row returned. Sorting and cursor use
 * exactly the same values, so a walk returns every row once, in order.
 *
 * `meta.count` is the number of rows the list matches: counted on the first page and carried
 * by the cursor to the next ones (same generation, same number). With `group_by` the route
 * answers groups instead (groups.ts), with `select` only some fields of each row.
 *
 * Rows are passed through as the bytes Elasticsearch stored (the exported row, verbatim):
 * parsing and serializing them again was most of a list request's cost. Only routes that
 * reshape a row (`toRecord`) or select fields parse them.
 */
import type { IndexName } from '../indices/all.ts';
import type { Row } from '../indices/description.ts';
import { type Count, type SortValue, checkPosition, cursorScope, decodeCursor, encodeCursor } from '../query/cursor.ts';
import { type Grouping, MAX_GROUPS } from '../query/groups.ts';
import { type PagePosition, type SearchBody, sortKinds } from '../query/list.ts';
import { selectFields } from '../query/select.ts';
import type { GenerationDoc } from '../indices/generation.ts';
import type { Reader } from '../search/search-service.ts';
import type { TotalHits } from '../search/raw-hits.ts';
import { type Meta, toEnvelope, toRawEnvelope } from '../http/envelope.ts';
import { ApiError } from '../errors.ts';
import type { AppContext, RouteDeps } from './context.ts';
import { sendGroups } from './groups.ts';

/** `group_by` as a list route received it. */
export interface GroupRequest {
  by: Grouping;
  includeUnknown: boolean;
  /** Groups answered at most: `limit`, else `MAX_GROUPS`. */
  limit: number;
}

/** The `group_by` request of a route's parameters, if it has one. */
export function groupRequest(params: { group_by?: Grouping; include_unknown?: boolean; limit?: number }): GroupRequest | undefined {
  return params.group_by && { by: params.group_by, includeUnknown: params.include_unknown ?? false, limit: params.limit ?? MAX_GROUPS };
}

export interface PageRequest<Source = { row: Row }> {
  /** Route pattern, e.g. `/v1/entities`. */
  route: string;
  /** Every parameter that shapes the result (not `cursor`, `limit`, `select`): binds the cursor. */
  bind: Record<string, unknown>;
  cursor: string | undefined;
  limit: number;
  index: IndexName;
  /** Builds the request body for this generation (its current cycle) from the page position. */
  body(reader: Reader, page: PagePosition): SearchBody;
  /** Hit → record, for routes that reshape rows; without it rows are passed through verbatim. */
  toRecord?(source: Source): unknown;
  /** Rows counted exactly up to this many, a lower bound beyond (default: always exactly). */
  countUpTo?: number;
  /** `select`: only these top-level fields of each row (and `id`). */
  select?: readonly string[];
  /** `group_by`: the groups of the matching rows instead of rows. */
  groups?: GroupRequest;
  /** More `meta` of a page, from the generation it was read from. */
  meta?(generation: GenerationDoc): Record<string, unknown>;
}

/** `meta` of a list answer. */
export interface ListMeta extends Meta {
  count: number;
  countIsExact: boolean;
}

/** The count a search answered (it always answers one when asked to track). */
export function countOf(total: TotalHits | number | undefined): Count {
  if (typeof total === 'number') return { value: total, exact: true };
  if (total === undefined) throw ApiError.internal();
  return { value: total.value, exact: total.relation === 'eq' };
}

export const listMeta = (meta: Meta, count: Count, more?: Record<string, unknown>): ListMeta => ({ ...meta, count: count.value, countIsExact: count.exact, ...more });

/** Reads a page (or its groups) and answers it in the envelope. */
export async function sendPage<Source>(ctx: AppContext, deps: Pick<RouteDeps, 'search' | 'meta' | 'config'>, request: PageRequest<Source>): Promise<void> {
  if (request.groups) return sendGroups(ctx, deps, request, request.groups);
  const key = deps.config.cursorSecret;
  const scope = cursorScope(request.route, request.bind);
  const cursor = request.cursor === undefined ? undefined : decodeCursor(request.cursor, scope, key);
  const reader = await deps.search.reader(cursor?.generation);
  ctx.state.generation = reader.generation.generation;
  // The position must fit the sort this request will use (the body without a position tells it).
  const after = cursor && checkPosition(cursor.after, sortKinds(request.body(reader, {}).sort));
  const carried = cursor?.count;
  const body = request.body(reader, { after, count: carried ? false : (request.countUpTo ?? true) });
  const next = (sort: SortValue[] | undefined, more: boolean, count: Count) =>
    more && sort ? encodeCursor({ generation: reader.generation.generation, after: sort, count }, scope, key) : undefined;
  const select = request.select;
  const more = request.meta?.(reader.generation);

  if (request.toRecord) {
    const { hits } = await reader.search<Source>(request.index, body);
    const count = carried ?? countOf(hits.total);
    const page = hits.hits.slice(0, request.limit);
    const records = page.map((hit) => request.toRecord!(hit._source as Source));
    const data = select ? records.map((record) => selectFields(record as Row, select)) : records;
    ctx.body = toEnvelope(data, listMeta(deps.meta, count, more), next(page.at(-1)?.sort as SortValue[] | undefined, hits.hits.length > request.limit, count));
    return;
  }
  const { hits, total } = await reader.searchRows(request.index, body);
  const count = carried ?? countOf(total);
  const page = hits.slice(0, request.limit);
  const last = page.at(-1)?.sort;
  const rows = page.map((hit) => (select ? Buffer.from(JSON.stringify(selectFields(JSON.parse(hit.row.toString('utf8')), select))) : hit.row));
  ctx.body = toRawEnvelope(rows, listMeta(deps.meta, count, more), next(last && JSON.parse(last.toString('utf8')), hits.length > request.limit, count));
  ctx.type = 'application/json; charset=utf-8';
}
