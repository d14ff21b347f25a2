/**
 * Answers one page of a list route: decodes the cursor for this route and its filters, reads
 * the generation the cursor came from (or the live one), fetches `limit + 1` rows and hands
 * out the next cursor from the sort values of the last row returned. Sorting and cursor use
 * exactly the same values, so a walk returns every row once, in order.
 *
 * `meta.count` is the number of rows the list matches: counted on the first page and carried
 * by the cursor to the next ones (same generation, same number). With `select` only some fields
 * of each row. (`group_by` answers groups instead: groups.ts; list.ts picks.)
 *
 * Rows are passed through as the bytes Elasticsearch stored (the exported row, verbatim):
 * parsing and serializing them again was most of a list request's cost. Only routes that
 * reshape a row (`toRecord`) or select fields parse them.
 */
import type { Row } from '../indices/description.ts';
import { type Count, type SortValue, checkPosition, cursorScope, decodeCursor, encodeCursor } from '../query/cursor.ts';
import { type ListQuery, sortKinds, toAskedIdsBody, toListBody, toQuery } from '../query/list.ts';
import type { Reader } from '../search/search-service.ts';
import { selectFields } from '../query/select.ts';
import { toEnvelope, toRawEnvelope } from '../http/envelope.ts';
import { type AppContext, type RouteDeps, metaOf, requestReader } from './context.ts';
import { type ListRequest, countOf, listMeta } from './list-request.ts';

/** Of the ids a request asked for, those no row of its query matches (one search of at most MAX_ANY_OF rows' doc values). */
async function missingIds(reader: Reader, request: ListRequest<unknown>, list: ListQuery): Promise<string[]> {
  const { asked, fields } = request.ids!;
  const response = await reader.search(request.index, toAskedIdsBody(list, fields, asked.length));
  const found = new Set(response.hits.hits.flatMap((hit) => fields.flatMap((field) => (hit.fields?.[field] as string[] | undefined) ?? [])));
  return asked.filter((id) => !found.has(id));
}

/** Reads a page and answers it in the envelope. */
export async function sendPage<Source>(ctx: AppContext, deps: Pick<RouteDeps, 'search' | 'meta' | 'config'>, request: ListRequest<Source>): Promise<void> {
  const key = deps.config.cursorSecret;
  const scope = cursorScope(request.route, request.bind);
  const cursor = request.cursor === undefined ? undefined : decodeCursor(request.cursor, scope, key);
  const reader = await requestReader(ctx, deps.search, cursor?.generation);
  // The position must fit the sort this request will use (the body without a position tells it).
  const list = request.query(reader.generation);
  const after = cursor && checkPosition(cursor.after, sortKinds(list.sort));
  // A first page's count as an earlier page of this generation read it, if one did: asked for
  // again, it would cost Elasticsearch every matching row, where a page that counts nothing stops
  // at its last row (on an index sorted as the list is: events, killmails).
  const upTo = request.countUpTo ?? true;
  const known = cursor ? undefined : reader.knownCount(request.index, toQuery(list), upTo);
  const carried = cursor?.count ?? known;
  const body = toListBody({ ...list, limit: request.limit, after, count: carried ? false : upTo });
  const counted = (count: Count) => {
    if (!carried && !cursor) reader.rememberCount(request.index, toQuery(list), upTo, count);
    return count;
  };
  const next = (sort: SortValue[] | undefined, more: boolean, count: Count) =>
    more && sort ? encodeCursor({ generation: reader.generation.generation, after: sort, count }, scope, key) : undefined;
  const select = request.select;
  const more = { ...request.meta?.(reader.generation), ...(request.ids && !cursor ? { missing: await missingIds(reader, request, list) } : {}) };

  if (request.toRecord) {
    const { hits } = await reader.search<Source>(request.index, body);
    const count = carried ?? counted(countOf(hits.total));
    const page = hits.hits.slice(0, request.limit);
    const records = page.map((hit) => request.toRecord!(hit._source as Source));
    const data = select ? records.map((record) => selectFields(record as Row, select)) : records;
    ctx.body = toEnvelope(data, listMeta(metaOf(ctx, deps), count, more), next(page.at(-1)?.sort as SortValue[] | undefined, hits.hits.length > request.limit, count));
    return;
  }
  const { hits, total } = await reader.searchRows(request.index, body, { withChanges: request.withChanges });
  const count = carried ?? counted(countOf(total));
  const page = hits.slice(0, request.limit);
  const last = page.at(-1)?.sort;
  const expanded = request.expand && (await request.expand(reader, page.map((hit) => JSON.parse(hit.row.toString('utf8')) as Row)));
  const rows = expanded
    ? expanded.map((record) => Buffer.from(JSON.stringify(select ? selectFields(record, select) : record)))
    : page.map((hit) => (select ? Buffer.from(JSON.stringify(selectFields(JSON.parse(hit.row.toString('utf8')), select))) : hit.row));
  ctx.body = toRawEnvelope(rows, listMeta(metaOf(ctx, deps), count, more), next(last && JSON.parse(last.toString('utf8')), hits.length > request.limit, count));
  ctx.type = 'application/json; charset=utf-8';
}
