/**
 * Reads one page of a list route: decodes the cursor for this route and its filters, reads
 * the generation the cursor came from (or the live one), fetches `limit + 1` rows and hands
 * out the next cursor from the sort values of the last row returned. Sorting and cursor use
 * exactly the same values, so a walk returns every row once, in order.
 */
import type { estypes } from '@elastic/elasticsearch';
import type { IndexName } from '../indices/all.ts';
import type { Row } from '../indices/description.ts';
import { type SortValue, checkPosition, cursorScope, decodeCursor, encodeCursor } from '../query/cursor.ts';
import { type SearchBody, sortKinds } from '../query/list.ts';
import type { Reader, SearchService } from '../search/search-service.ts';
import { toEnvelope } from '../http/envelope.ts';
import type { AppContext, RouteDeps } from './context.ts';

export interface PageRequest<Source = { row: Row }, Out = Row> {
  search: SearchService;
  /** HMAC key of the cursors (config `cursorSecret`). */
  cursorSecret: string;
  /** Route pattern, e.g. `/v1/entities`. */
  route: string;
  /** Every parameter that shapes the result (not `cursor`, not `limit`): binds the cursor. */
  bind: Record<string, unknown>;
  cursor: string | undefined;
  limit: number;
  index: IndexName;
  /** Builds the request body for this generation (its current cycle) from the cursor position. */
  body(reader: Reader, after: SortValue[] | undefined): SearchBody;
  /** Hit → record; by default the exported row, verbatim. */
  toRecord?(source: Source, hit: estypes.SearchHit<Source>): Out;
}

export interface Page<Out> {
  data: Out[];
  nextCursor?: string;
  /** The generation the page was read from, for follow-up reads (e.g. enrichment). */
  reader: Reader;
}

export async function readPage<Source = { row: Row }, Out = Row>(ctx: AppContext, request: PageRequest<Source, Out>): Promise<Page<Out>> {
  const scope = cursorScope(request.route, request.bind);
  const cursor = request.cursor === undefined ? undefined : decodeCursor(request.cursor, scope, request.cursorSecret);
  const reader = await request.search.reader(cursor?.generation);
  ctx.state.generation = reader.generation.generation;
  // The position must fit the sort this request will use (the body without a position tells it).
  const after = cursor && checkPosition(cursor.after, sortKinds(request.body(reader, undefined).sort));
  const response = await reader.search<Source>(request.index, request.body(reader, after));
  const hits = response.hits.hits;
  const page = hits.slice(0, request.limit);
  const toRecord = request.toRecord ?? ((source: Source) => (source as { row: Row }).row as Out);
  const data = page.map((hit) => toRecord(hit._source as Source, hit));
  const last = page.at(-1);
  if (hits.length <= request.limit || !last?.sort) return { data, reader };
  const nextCursor = encodeCursor({ generation: reader.generation.generation, after: last.sort as SortValue[] }, scope, request.cursorSecret);
  return { data, nextCursor, reader };
}

/** Reads a page and answers it in the envelope: what most list routes do. */
export async function sendPage(ctx: AppContext, deps: Pick<RouteDeps, 'search' | 'meta' | 'config'>, request: Omit<PageRequest, 'search' | 'cursorSecret'>): Promise<void> {
  const page = await readPage(ctx, { ...request, search: deps.search, cursorSecret: deps.config.cursorSecret });
  ctx.body = toEnvelope(page.data, deps.meta, page.nextCursor);
}
