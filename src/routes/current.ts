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
import { type CurrentListParams, RELATION_SORTS, currentEntityFilter, toCurrentEntityListQuery, toCurrentRelationListQuery } from '../query/current.ts';
import { toEntityListQuery } from '../query/entities.ts';
import { cycleGroup, groupByParameter, keyword } from '../query/groups.ts';
import { FORMAT, INCLUDE_UNKNOWN, LIST, PROFILE, Q, listParams, sortParameter } from '../query/route-parameters.ts';
import { selectParameter } from '../query/select.ts';
import type { Values } from '../query/parameters.ts';
import type { Reader } from '../search/search-service.ts';
import { type AppContext, type AppRouter, type RouteDeps, requestReader } from './context.ts';
import { list, route } from './operation.ts';
import { ENTITY_SORT, entitySortOf } from './entities.ts';
import { groupRequest } from './list-request.ts';
import { sendList } from './list.ts';
import { fieldsOf, ref } from './records.ts';
import { generationMemo } from '../search/generation-memo.ts';

/** What `select` can keep, and a CSV's columns without it. */
const ENTITY_FIELDS = fieldsOf('CurrentEntity', 'Entity');
const RELATION_FIELDS = fieldsOf('CurrentRelation');

/** Current rows group by their cycle and type; fallback rows (entities) have both too. */
const ENTITY_QUERY = [
  ...LIST,
  Q,
  PROFILE,
  ENTITY_SORT,
  selectParameter(ENTITY_FIELDS),
  groupByParameter([cycleGroup, keyword('entityType')]),
  INCLUDE_UNKNOWN,
  FORMAT,
] as const;
const RELATION_SORT = sortParameter(RELATION_SORTS, '`relevance` with `q`, else `label:asc`; `relevance` needs `q`');
const RELATION_QUERY = [
  ...LIST,
  Q,
  RELATION_SORT,
  selectParameter(RELATION_FIELDS),
  groupByParameter([keyword('predicate'), cycleGroup]),
  INCLUDE_UNKNOWN,
  FORMAT,
] as const;

function parseCurrent(params: Values<typeof ENTITY_QUERY>, deps: RouteDeps): CurrentListParams & { cursor?: string } {
  return { ...listParams(params, deps.config.defaultEnvironment), q: params.q, profile: params.profile, sort: entitySortOf(params.sort, params.q) };
}

/** Whether the collection has any current row in this environment and scope (read once per generation). */
function createHasRows() {
  type Asked = { collection: string; params: CurrentListParams };
  return generationMemo(
    (reader, { collection, params: p }: Asked) => reader.count('current_entities', { bool: { filter: currentEntityFilter(collection, p.environment, p.scope, reader.generation.currentCycle) } }).then((n) => n > 0),
    ({ collection, params: p }) => JSON.stringify([collection, p.environment, p.scope]),
    1000,
  );
}

export function currentRoutes(router: AppRouter, deps: RouteDeps): void {
  const hasRows = createHasRows();
  for (const [collection, { entityType, fallback }] of Object.entries(CURRENT_ENTITY_COLLECTIONS)) {
    const path = `/v1/current/${collection}`;
    const operation = {
      summary: `Current ${collection}${fallback ? ` (entity rows of type ${entityType} when the scope has no current row)` : ''}`,
      query: ENTITY_QUERY,
      answer: list(fallback ? { anyOf: [ref('CurrentEntity'), ref('Entity')] } : ref('CurrentEntity')),
    };
    route(router, path, operation, async (ctx: AppContext, params) => {
      const { cursor, limit, ...bind } = parseCurrent(params, deps);
      const p = { ...bind, limit };
      // The mode is decided on the live generation; a cursor binds it through its scope.
      const live = await requestReader(ctx, deps.search);
      const useEntities = fallback && !(await hasRows(live, { collection, params: p }));
      const common = { route: path, cursor, limit, select: params.select, groups: groupRequest(params), format: params.format, columns: ENTITY_FIELDS };
      await sendList(
        ctx,
        deps,
        useEntities
          ? {
              ...common,
              bind: { ...bind, mode: 'entities' },
              index: 'entities',
              query: ({ currentCycle }) => toEntityListQuery({ ...p, entityType: [entityType] }, currentCycle),
            }
          : {
              ...common,
              bind: { ...bind, mode: 'current' },
              index: 'current_entities',
              query: ({ currentCycle }) => toCurrentEntityListQuery(collection, p, currentCycle),
            },
      );
    });
  }

  for (const [collection, predicates] of Object.entries(CURRENT_RELATION_COLLECTIONS)) {
    const path = `/v1/current/${collection}`;
    const operation = { summary: `Current ${predicates.join(' / ')} relations`, query: RELATION_QUERY, answer: list(ref('CurrentRelation')) };
    route(router, path, operation, async (ctx: AppContext, params) => {
      const sort = entitySortOf(params.sort, params.q);
      const { cursor, limit, ...bind } = { ...listParams(params, deps.config.defaultEnvironment), q: params.q, sort };
      await sendList(ctx, deps, {
        route: path,
        bind,
        cursor,
        limit,
        index: 'current_relations',
        query: ({ currentCycle }) => toCurrentRelationListQuery(collection, bind, currentCycle),
        select: params.select,
        groups: groupRequest(params),
        format: params.format,
        columns: RELATION_FIELDS,
      });
    });
  }
}
