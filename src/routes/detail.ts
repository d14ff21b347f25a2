/** Detail routes: one exported row from the live generation, or a 404 with the resource's message. */
import type { IndexName } from '../indices/all.ts';
import type { Row } from '../indices/description.ts';
import { toEnvelope } from '../http/envelope.ts';
import { ApiError } from '../errors.ts';
import type { SearchBody } from '../query/list.ts';
import type { Reader } from '../search/search-service.ts';
import type { AppContext, AppRouter, RouteDeps } from './context.ts';
import { type Operation, route } from './operation.ts';

type Found = { reader: Reader; row: Row };

/** The row stored under an id (a document get, no search). */
export async function rowById(ctx: AppContext, deps: RouteDeps, index: IndexName, id: string, notFound: string): Promise<Found> {
  const reader = await deps.search.reader();
  ctx.state.generation = reader.generation.generation;
  const [found] = await reader.getMany<{ row: Row }>(index, [id]);
  if (!found) throw ApiError.notFound(notFound);
  return { reader, row: found.row };
}

/** The first row a lookup query finds (an id or slug, a static type id). */
export async function firstRow(ctx: AppContext, deps: RouteDeps, index: IndexName, body: SearchBody, notFound: string): Promise<Found> {
  const reader = await deps.search.reader();
  ctx.state.generation = reader.generation.generation;
  const hit = (await reader.search<{ row: Row }>(index, body)).hits.hits[0]?._source;
  if (!hit) throw ApiError.notFound(notFound);
  return { reader, row: hit.row };
}

/** `GET {path}` with an `:id` and no parameters, answering the row stored under that id. */
export function detailRoute(
  router: AppRouter,
  deps: RouteDeps,
  path: string,
  index: IndexName,
  notFound: string,
  operation: Pick<Operation, 'summary' | 'answer'>,
): void {
  route(router, path, { ...operation, query: [] }, async (ctx) => {
    ctx.body = toEnvelope((await rowById(ctx, deps, index, ctx.params.id!, notFound)).row, deps.meta);
  });
}
