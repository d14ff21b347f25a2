/**
 * Answers one page of a list route: decodes the cursor for this route and its filters, reads
 * the generation the cursor came from (or the live one), fetches `limit + 1` rows and hands
 * out the next cursor from the sort values of the last row returned. Sorting and cursor use
 * exactly the same values, so a walk returns every row once, in order.
 *
 * Rows are passed through as the bytes Elasticsearch stored (the exported row, verbatim):
 * parsing and serializing them again was most of a list request's cost. Only routes that
 * reshape a row (`toRecord`) read parsed hits.
 */
import type { IndexName } from '../indices/all.ts';
import type { Row } from '../indices/description.ts';
import { type SortValue, checkPosition, cursorScope, decodeCursor, encodeCursor } from '../query/cursor.ts';
import { type SearchBody, sortKinds } from '../query/list.ts';
import type { Reader } from '../search/search-service.ts';
import { toEnvelope, toRawEnvelope } from '../http/envelope.ts';
import type { AppContext, RouteDeps } from './context.ts';

export interface PageRequest<Source = { row: Row }> {
  /** Route pattern, e.g. `/v1/entities`. */
  route: string;
  /** Every parameter that shapes the result (not `cursor`, not `limit`): binds the cursor. */
  bind: Record<string, unknown>;
  cursor: string | undefined;
  limit: number;
  index: IndexName;
  /** Builds the request body for this generation (its current cycle) from the cursor position. */
  body(reader: Reader, after: SortValue[] | undefined): SearchBody;
  /** Hit → record, for routes that reshape rows; without it rows are passed through verbatim. */
  toRecord?(source: Source): unknown;
}

/** Reads a page and answers it in the envelope. */
export async function sendPage<Source>(ctx: AppContext, deps: Pick<RouteDeps, 'search' | 'meta' | 'config'>, request: PageRequest<Source>): Promise<void> {
  const key = deps.config.cursorSecret;
  const scope = cursorScope(request.route, request.bind);
  const cursor = request.cursor === undefined ? undefined : decodeCursor(request.cursor, scope, key);
  const reader = await deps.search.reader(cursor?.generation);
  ctx.state.generation = reader.generation.generation;
  // The position must fit the sort this request will use (the body without a position tells it).
  const after = cursor && checkPosition(cursor.after, sortKinds(request.body(reader, undefined).sort));
  const body = request.body(reader, after);
  const next = (sort: SortValue[] | undefined, more: boolean) =>
    more && sort ? encodeCursor({ generation: reader.generation.generation, after: sort }, scope, key) : undefined;

  if (request.toRecord) {
    const hits = (await reader.search<Source>(request.index, body)).hits.hits;
    const page = hits.slice(0, request.limit);
    const data = page.map((hit) => request.toRecord!(hit._source as Source));
    ctx.body = toEnvelope(data, deps.meta, next(page.at(-1)?.sort as SortValue[] | undefined, hits.length > request.limit));
    return;
  }
  const hits = await reader.searchRows(request.index, body);
  const page = hits.slice(0, request.limit);
  const last = page.at(-1)?.sort;
  ctx.body = toRawEnvelope(page.map((hit) => hit.row), deps.meta, next(last && JSON.parse(last.toString('utf8')), hits.length > request.limit));
  ctx.type = 'application/json; charset=utf-8';
}
