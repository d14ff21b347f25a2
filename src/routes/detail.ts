/** Detail routes: one exported row from the live generation, or a 404 with the resource's message (a 410 for one the registry removed). */
import type { IndexName } from '../indices/all.ts';
import type { Row } from '../indices/description.ts';
import { toEnvelope } from '../http/envelope.ts';
import { ApiError } from '../errors.ts';
import type { SearchBody } from '../query/list.ts';
import type { Reader } from '../search/search-service.ts';
import { type AppContext, type AppRouter, type RouteDeps, metaOf, requestReader } from './context.ts';
import { type Operation, route } from './operation.ts';

type Found = { reader: Reader; row: Row };

/** The row stored under an id (a document get, no search). */
export async function rowById(ctx: AppContext, deps: RouteDeps, index: IndexName, id: string, notFound: string): Promise<Found> {
  const reader = await requestReader(ctx, deps.search);
  const [found] = await reader.getMany<{ row: Row }>(index, [id]);
  if (!found) throw await missing(reader, index, notFound, id);
  return { reader, row: found.row };
}

/** A 410 for a record the registry removed (while its tombstone is kept), else the 404. */
async function missing(reader: Reader, index: IndexName, notFound: string, value: string, fields?: readonly string[]): Promise<ApiError> {
  const removedAt = await reader.removedAt(index, value, fields);
  return removedAt ? ApiError.gone('This record', removedAt) : ApiError.notFound(notFound);
}

/** The first row a lookup query finds (an id or slug, a static type id); `gone`: the value and the fields a removed one is found by. */
export async function firstRow(ctx: AppContext, deps: RouteDeps, index: IndexName, body: SearchBody, notFound: string, gone?: { value: string; fields: readonly string[] }): Promise<Found> {
  const reader = await requestReader(ctx, deps.search);
  const hit = (await reader.search<{ row: Row }>(index, body)).hits.hits[0]?._source;
  if (!hit) throw gone ? await missing(reader, index, notFound, gone.value, gone.fields) : ApiError.notFound(notFound);
  return { reader, row: hit.row };
}

/** `GET {path}` with an `:id` and no parameters, answering the row stored under that id. */
export function detailRoute(
  router: AppRouter,
  deps: RouteDeps,
  path: string,
  index: IndexName,
  notFound: string,
  operation: Pick<Operation, 'summary' | 'answer' | 'mayBeGone'>,
): void {
  route(router, path, { ...operation, query: [] }, async (ctx) => {
    ctx.body = toEnvelope((await rowById(ctx, deps, index, ctx.params.id!, notFound)).row, metaOf(ctx, deps));
  });
}
