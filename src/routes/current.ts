/**
 * `/v1/current/{collection}`: the registry's current view, 17 entity collections and two
 * relation feeds (`ownership`, `route-edges`).
 *
 * Fallback to plain entity records is decided per collection and scope: only when the
 * collection has no current rows at all in that environment and cycle scope (whatever `q`
 * or the page), so one route never changes shape between pages (the reference flipped on
 * any empty page: its weak point 5). Characters and tribes never fall back.
 */
import { CURRENT_ENTITY_COLLECTIONS, CURRENT_RELATION_COLLECTIONS } from '../indices/collections.ts';
import {
  type CurrentListParams,
  currentEntityFilter,
  toCurrentEntityListBody,
  toCurrentRelationListBody,
} from '../query/current.ts';
import { toEntityListBody } from '../query/entities.ts';
import { LIST_PARAMS, type Params, parseListParams, parseProfile, parseQ, takeParams } from '../query/params.ts';
import type { Reader } from '../search/search-service.ts';
import type { AppContext, AppRouter, RouteDeps } from './context.ts';
import { sendPage } from './page.ts';

function parseCurrent(params: Params, deps: RouteDeps): CurrentListParams & { cursor?: string } {
  return { ...parseListParams(params, deps.config.defaultEnvironment), q: parseQ(params.q), profile: parseProfile(params.profile) };
}

/** Whether the collection has any current row in this environment and scope (cached per generation). */
function createHasRows() {
  const cache = new Map<string, Promise<boolean>>();
  return (reader: Reader, collection: string, p: CurrentListParams): Promise<boolean> => {
    const key = JSON.stringify([reader.generation.generation, collection, p.environment, p.scope]);
    let known = cache.get(key);
    if (!known) {
      if (cache.size > 1000) cache.clear();
      const filter = currentEntityFilter(collection, p.environment, p.scope, reader.generation.currentCycle);
      known = reader.count('current_entities', { bool: { filter } }).then((n) => n > 0);
      known.catch(() => cache.delete(key));
      cache.set(key, known);
    }
    return known;
  };
}

export function currentRoutes(router: AppRouter, deps: RouteDeps): void {
  const hasRows = createHasRows();
  const ENTITY_PARAMS = [...LIST_PARAMS, 'q', 'profile'];

  for (const [collection, { entityType, fallback }] of Object.entries(CURRENT_ENTITY_COLLECTIONS)) {
    const route = `/v1/current/${collection}`;
    router.get(route, async (ctx: AppContext) => {
      const { cursor, limit, ...bind } = parseCurrent(takeParams(ctx.query, ENTITY_PARAMS), deps);
      const p = { ...bind, limit };
      // The mode is decided on the live generation; a cursor binds it through its scope.
      const live = await deps.search.reader();
      const useEntities = fallback && !(await hasRows(live, collection, p));
      const common = { route, cursor, limit };
      await sendPage(
        ctx,
        deps,
        useEntities
          ? {
              ...common,
              bind: { ...bind, mode: 'entities' },
              index: 'entities',
              body: (reader, after) => toEntityListBody({ ...p, entityType }, reader.generation.currentCycle, after),
            }
          : {
              ...common,
              bind: { ...bind, mode: 'current' },
              index: 'current_entities',
              body: (reader, after) => toCurrentEntityListBody(collection, p, reader.generation.currentCycle, after),
            },
      );
    });
  }

  const RELATION_PARAMS = [...LIST_PARAMS, 'q'];
  for (const collection of Object.keys(CURRENT_RELATION_COLLECTIONS)) {
    const route = `/v1/current/${collection}`;
    router.get(route, async (ctx: AppContext) => {
      const params = takeParams(ctx.query, RELATION_PARAMS);
      const { cursor, limit, ...bind } = { ...parseListParams(params, deps.config.defaultEnvironment), q: parseQ(params.q) };
      await sendPage(ctx, deps, {
        route,
        bind,
        cursor,
        limit,
        index: 'current_relations',
        body: (reader, after) => toCurrentRelationListBody(collection, { ...bind, limit }, reader.generation.currentCycle, after),
      });
    });
  }
}
