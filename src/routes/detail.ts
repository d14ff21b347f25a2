/** One exported row by its id from the live generation, or a 404 with the resource's message. */
import type { IndexName } from '../indices/all.ts';
import type { Row } from '../indices/description.ts';
import { ApiError } from '../http/errors.ts';
import type { Reader } from '../search/search-service.ts';
import type { AppContext, RouteDeps } from './context.ts';

export async function rowById(ctx: AppContext, deps: RouteDeps, index: IndexName, id: string, notFound: string): Promise<{ reader: Reader; row: Row }> {
  const reader = await deps.search.reader();
  ctx.state.generation = reader.generation.generation;
  const [found] = await reader.getMany<{ row: Row }>(index, [id]);
  if (!found) throw ApiError.notFound(notFound);
  return { reader, row: found.row };
}
