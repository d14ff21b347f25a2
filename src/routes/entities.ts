/**
 * Entity routes: `/v1/search`, `/v1/entities`, the 14 typed collections, an entity by id or
 * slug, and its facts, relations, sources and history.
 */
import { TYPED_COLLECTIONS } from '../indices/collections.ts';
import type { Row } from '../indices/description.ts';
import { toEnvelope } from '../http/envelope.ts';
import { ApiError } from '../errors.ts';
import { ENTITY_SORTS, type EntityListParams, type EntitySort, toEntityListQuery, toEntityLookupBody, toStaticTypeLookupBody } from '../query/entities.ts';
import { type GroupField, cycleGroup, groupByParameter, keyword } from '../query/groups.ts';
import {
  CONFIDENCE,
  CURSOR,
  DEFAULT_LIMIT,
  ENTITY_TYPE,
  ENVIRONMENT,
  EXCLUDE,
  INCLUDE_UNKNOWN,
  FORMAT,
  LIMIT,
  LIST,
  PROFILE,
  Q,
  SINCE,
  UNTIL,
  IDS,
  TYPE,
  UPDATED_SINCE,
  boundSort,
  listParams,
  sortParameter,
} from '../query/route-parameters.ts';
import type { Values } from '../query/parameters.ts';
import { toEntityFactsBody, toEntityFactsQuery, toEntityRelationsBody, toEntityRelationsQuery, toEntitySourcesBody, toEntitySourcesQuery } from '../query/provenance.ts';
import { selectParameter } from '../query/select.ts';
import { ACTIVITY_KINDS, type ActivityKind, COVERING_SHARD_SIZE, activityOf, toActivityBody } from '../query/activity.ts';
import { CYCLE, CYCLES, scopeOf } from '../query/scope.ts';
import type { ListQuery, SearchBody } from '../query/list.ts';
import type { AnyOf } from '../query/route-parameters.ts';
import type { Reader } from '../search/search-service.ts';
import { type AppContext, type AppRouter, type RouteDeps, metaOf } from './context.ts';
import { firstRow } from './detail.ts';
import { list, one, route } from './operation.ts';
import { groupRequest } from './list-request.ts';
import { sendList } from './list.ts';
import { fieldsOf, ref } from './records.ts';

type Rowed = { row: Row };
const rowOf = (source: Rowed) => source.row;

/** `sort` of entity lists and current entity collections. */
export const ENTITY_SORT = sortParameter(ENTITY_SORTS, '`relevance` with `q`, else `label:asc`; `relevance` needs `q`; `updatedAt:desc` puts rows without `updatedAt` last');
export const ENTITY_GROUPS: GroupField[] = [keyword('entityType'), keyword('environment'), cycleGroup];
/** What `select` can keep, and a CSV's columns without it. */
const ENTITY_FIELDS = fieldsOf('Entity');
/** What every entity list takes beyond its filters: order, fields, groups. */
const SHAPE = [ENTITY_SORT, selectParameter(ENTITY_FIELDS), groupByParameter(ENTITY_GROUPS), INCLUDE_UNKNOWN, FORMAT] as const;

/** Parameters of the entity lists; typed collections take no `type`, only characters take `profile`. */
const SEARCH_QUERY = [...LIST, Q, IDS, TYPE, ENTITY_TYPE, PROFILE, UPDATED_SINCE, ...SHAPE] as const;
const TYPED_QUERY = [...LIST, Q, IDS, UPDATED_SINCE, ...SHAPE] as const;
const CHARACTERS_QUERY = [...LIST, Q, IDS, PROFILE, UPDATED_SINCE, ...SHAPE] as const;

/** The order of a list that can be searched, as its cursor binds it; `relevance` without `q` is a 400. */
export function entitySortOf<Order extends EntitySort>(sort: Order | undefined, q: string | undefined): Order | undefined {
  if (sort === 'relevance' && q === undefined) throw ApiError.badParameter('sort', 'sort=relevance ranks by q: give q, or another sort.');
  return boundSort<EntitySort>(sort, q === undefined ? 'label:asc' : 'relevance') as Order | undefined;
}

type EntityList = EntityListParams & { cursor?: string; params: Values<typeof SEARCH_QUERY> };

function parseEntityList(params: Values<typeof SEARCH_QUERY>, deps: RouteDeps, options: { entityType?: string; staticTypes?: boolean } = {}): EntityList {
  const { type, entityType, q, profile, updated_since: updatedSince, id: ids } = params;
  if (type !== undefined && entityType !== undefined && type.join('|') !== entityType.join('|')) {
    throw ApiError.badParameter('type', 'Give type or entityType, not two different values.');
  }
  return {
    ...listParams(params, deps.config.defaultEnvironment),
    q,
    entityType: options.entityType !== undefined ? [options.entityType] : (type ?? entityType),
    profile,
    staticTypes: options.staticTypes,
    updatedSince,
    ids,
    sort: entitySortOf(params.sort, q),
    params,
  };
}

async function listEntities(ctx: AppContext, deps: RouteDeps, route: string, p: EntityList) {
  const { cursor, limit, params, ...bind } = p;
  await sendList(ctx, deps, {
    route,
    bind,
    cursor,
    limit,
    index: 'entities',
    query: ({ currentCycle }) => toEntityListQuery(p, currentCycle),
    select: params.select,
    groups: groupRequest(params),
    ids: p.ids && { asked: p.ids, fields: ['id', 'slug'] },
    format: params.format,
    columns: ENTITY_FIELDS,
  });
}

/** The entity row for an id or slug, or 404. */
async function findEntity(ctx: AppContext, deps: RouteDeps, idOrSlug: string, entityType?: string): Promise<{ reader: Reader; id: string; row: Row }> {
  const { reader, row } = await firstRow(ctx, deps, 'entities', toEntityLookupBody(idOrSlug, entityType), 'Entity not found.', { value: idOrSlug, fields: ['id', 'slug'] });
  return { reader, id: String(row.id), row };
}

/** Entity sources answer the nested source object; facts and relations their rows, passed through. */
const sourceOf = (s: Rowed) => (s.row.source ?? s.row) as Row;

/** Facts group by their source's kind through the sources index (facts rows carry none). */
const FACT_GROUPS: GroupField[] = [keyword('key'), keyword('confidence'), { name: 'sourceKind', field: 'sourceId', type: 'keyword', through: 'sourceKind' }, cycleGroup];

/** Each subroute's record fields, named once for `select` and for CSV columns. */
const FACT_FIELDS = fieldsOf('Fact');
const RELATION_FIELDS = fieldsOf('Relation');
const ENTITY_SOURCE_FIELDS = fieldsOf('EntitySource');

const SUBROUTES = {
  facts: {
    index: 'facts',
    toRecord: undefined,
    summary: 'Facts',
    schema: ref('Fact'),
    columns: FACT_FIELDS,
    query: [LIMIT, CURSOR, CONFIDENCE, selectParameter(FACT_FIELDS), groupByParameter(FACT_GROUPS), INCLUDE_UNKNOWN, FORMAT],
  },
  relations: {
    index: 'relations',
    toRecord: undefined,
    summary: 'Relations (as subject or object)',
    schema: ref('Relation'),
    columns: RELATION_FIELDS,
    query: [LIMIT, CURSOR, selectParameter(RELATION_FIELDS), groupByParameter([keyword('predicate'), keyword('confidence')]), INCLUDE_UNKNOWN, FORMAT],
  },
  sources: {
    index: 'entity_sources',
    toRecord: sourceOf,
    summary: 'Sources',
    schema: ref('EntitySource'),
    columns: ENTITY_SOURCE_FIELDS,
    query: [LIMIT, CURSOR, selectParameter(ENTITY_SOURCE_FIELDS), groupByParameter([keyword('kind')]), INCLUDE_UNKNOWN, FORMAT],
  },
} as const;

/** The query of a subroute's list: facts take their `confidence` filter. */
function subrouteQuery(name: keyof typeof SUBROUTES, id: string, params: { confidence?: AnyOf }): ListQuery {
  if (name === 'facts') return toEntityFactsQuery(id, { confidence: params.confidence });
  return name === 'relations' ? toEntityRelationsQuery(id) : toEntitySourcesQuery(id);
}

/** Rows of each section that `/history` includes (the reference returned them all, unbounded). */
const HISTORY_LIMIT = 200;

export function entityRoutes(router: AppRouter, deps: RouteDeps): void {
  // One handler, as in the reference: `/v1/search` without `q` is the entity list (the explorer's
  // opening tab). Both bind their cursors to `/v1/entities`, so the two answer the same page.
  const entityList = (ctx: AppContext, params: Values<typeof SEARCH_QUERY>) => listEntities(ctx, deps, '/v1/entities', parseEntityList(params, deps));
  const searchAnswer = { query: SEARCH_QUERY, answer: list(ref('Entity')) };
  route(router, '/v1/search', { summary: 'Search entities (without `q`: the entity list)', ...searchAnswer }, entityList);
  route(router, '/v1/entities', { summary: 'Entities, by label (with `q`: by relevance)', ...searchAnswer }, entityList);

  route(router, '/v1/entities/:idOrSlug', { summary: 'An entity by id or slug', query: [], answer: one(ref('Entity')), mayBeGone: true }, async (ctx) => {
    const { row } = await findEntity(ctx, deps, ctx.params.idOrSlug!);
    ctx.body = toEnvelope(row, metaOf(ctx, deps));
  });

  for (const [name, sub] of Object.entries(SUBROUTES) as [keyof typeof SUBROUTES, (typeof SUBROUTES)[keyof typeof SUBROUTES]][]) {
    const path = `/v1/entities/:idOrSlug/${name}`;
    route(router, path, { summary: `${sub.summary} of an entity`, query: sub.query, answer: list(sub.schema), mayBeGone: true }, async (ctx, values) => {
      // Only facts declare `confidence`; on the other subroutes it is always absent.
      const params = values as Values<typeof SUBROUTES.facts.query>;
      const { limit = DEFAULT_LIMIT, cursor, confidence } = params;
      const { id } = await findEntity(ctx, deps, ctx.params.idOrSlug!);
      await sendList(ctx, deps, {
        route: path,
        bind: { id, confidence },
        cursor,
        limit,
        index: sub.index,
        query: () => subrouteQuery(name, id, { confidence }),
        toRecord: sub.toRecord,
        select: params.select,
        groups: groupRequest(params),
        format: params.format,
        columns: sub.columns,
      });
    });
  }

  const history = { summary: 'An entity with its first 200 facts, relations and sources', query: [], answer: one(ref('History')), cost: 'search', mayBeGone: true } as const;
  route(router, '/v1/entities/:idOrSlug/history', history, async (ctx) => {
    const { reader, id, row } = await findEntity(ctx, deps, ctx.params.idOrSlug!);
    const section = async (index: 'facts' | 'relations' | 'entity_sources', body: SearchBody, toRecord: (s: Rowed) => Row) => {
      const hits = (await reader.search<Rowed>(index, body)).hits.hits;
      return { rows: hits.slice(0, HISTORY_LIMIT).map((h) => toRecord(h._source!)), more: hits.length > HISTORY_LIMIT };
    };
    const [facts, relations, sources] = await Promise.all([
      section('facts', toEntityFactsBody(id, HISTORY_LIMIT), rowOf),
      section('relations', toEntityRelationsBody(id, HISTORY_LIMIT), rowOf),
      section('entity_sources', toEntitySourcesBody(id, HISTORY_LIMIT), sourceOf),
    ]);
    ctx.body = toEnvelope(
      {
        entity: row,
        facts: facts.rows,
        relations: relations.rows,
        sources: sources.rows,
        // Added to the reference's shape: which sections hold more rows than shown (page them on the subroutes).
        truncated: { facts: facts.more, relations: relations.more, sources: sources.more },
      },
      metaOf(ctx, deps),
    );
  });

  const activity = {
    summary: 'What a character, tribe or system did: kills and losses, NPC share, loss types, top systems and opponents, a 7 × 24 UTC grid',
    query: [CYCLES, CYCLE, SINCE, UNTIL, EXCLUDE] as const,
    answer: one(ref('Activity')),
    cost: 'search',
    mayBeGone: true,
  } as const;
  route(router, '/v1/entities/:idOrSlug/activity', activity, async (ctx, params) => {
    const { reader, id, row } = await findEntity(ctx, deps, ctx.params.idOrSlug!);
    const kind = String(row.entityType) as ActivityKind;
    if (!ACTIVITY_KINDS.includes(kind)) throw ApiError.badRequest(`Activity is kept for characters, tribes and systems; ${id} is a ${String(row.entityType)}.`);
    const request = { id, kind, environment: String(row.environment), scope: scopeOf(params), since: params.since, until: params.until, exclude: params.exclude };
    const read = async (shardSize?: number) => activityOf(request, ((await reader.search('killmails', toActivityBody(request, reader.generation.currentCycle, shardSize))).aggregations ?? {}) as Record<string, unknown>);
    let activity = await read();
    // Several shards left the top of a list unproven: every shard sends all its terms.
    if (!activity.exact) activity = await read(COVERING_SHARD_SIZE);
    ctx.body = toEnvelope(activity, metaOf(ctx, deps));
  });

  // Static types (items, materials, enemies, ships, ...: ids ending in `:type:<n>`), looked up by
  // their numeric type id in one environment (the reference matched `%:type:<id>` in any).
  const types = { summary: 'Static types (ids ending in `:type:<n>`)', query: SEARCH_QUERY, answer: list(ref('Entity')) };
  route(router, '/v1/types', types, (ctx, params) => listEntities(ctx, deps, '/v1/types', parseEntityList(params, deps, { staticTypes: true })));
  const staticType = { summary: 'A static type by its numeric type id', query: [ENVIRONMENT], answer: one(ref('Entity')) } as const;
  route(router, '/v1/types/:typeId', staticType, async (ctx, params) => {
    const environment = params.environment ?? deps.config.defaultEnvironment;
    const { row } = await firstRow(ctx, deps, 'entities', toStaticTypeLookupBody(ctx.params.typeId!, environment), 'Static type not found.');
    ctx.body = toEnvelope(row, metaOf(ctx, deps));
  });

  for (const [collection, entityType] of Object.entries(TYPED_COLLECTIONS)) {
    const query = collection === 'characters' ? CHARACTERS_QUERY : TYPED_QUERY;
    route(router, `/v1/${collection}`, { summary: `Entities of type ${entityType}`, query, answer: list(ref('Entity')) }, (ctx, params) =>
      listEntities(ctx, deps, `/v1/${collection}`, parseEntityList(params, deps, { entityType })),
    );
    const detail = { summary: `An entity of type ${entityType} by id or slug`, query: [], answer: one(ref('Entity')), mayBeGone: true };
    route(router, `/v1/${collection}/:idOrSlug`, detail, async (ctx) => {
      const { row } = await findEntity(ctx, deps, ctx.params.idOrSlug!, entityType);
      ctx.body = toEnvelope(row, metaOf(ctx, deps));
    });
  }
}
