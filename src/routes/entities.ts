/**
 * Entity routes: `/v1/search`, `/v1/entities`, the 14 typed collections, an entity by id or
 * slug, and its facts, relations, sources and history.
 */
import { TYPED_COLLECTIONS } from '../indices/collections.ts';
import type { Row } from '../indices/description.ts';
import { toEnvelope } from '../http/envelope.ts';
import { ApiError } from '../errors.ts';
import { type EntityListParams, toEntityListBody, toEntityLookupBody, toStaticTypeLookupBody } from '../query/entities.ts';
import { LIST_PARAMS, type Params, parseLimit, parseListParams, parseProfile, parseQ, takeParams, text } from '../query/params.ts';
import { toEntityFactsBody, toEntityRelationsBody, toEntitySourcesBody } from '../query/provenance.ts';
import type { SearchBody } from '../query/list.ts';
import type { Reader } from '../search/search-service.ts';
import type { AppContext, AppRouter, RouteDeps } from './context.ts';
import { firstRow } from './detail.ts';
import { sendPage } from './page.ts';

type Rowed = { row: Row };
const rowOf = (source: Rowed) => source.row;

function parseEntityList(params: Params, deps: RouteDeps, options: { entityType?: string; staticTypes?: boolean } = {}): EntityListParams & { cursor?: string } {
  const list = parseListParams(params, deps.config.defaultEnvironment);
  const type = text(params, 'type');
  const entityType = text(params, 'entityType');
  if (type !== undefined && entityType !== undefined && type !== entityType) {
    throw ApiError.badParameter('type', 'Give type or entityType, not two different values.');
  }
  return {
    ...list,
    q: parseQ(params.q),
    entityType: options.entityType ?? type ?? entityType,
    profile: parseProfile(params.profile),
    staticTypes: options.staticTypes,
  };
}

async function listEntities(ctx: AppContext, deps: RouteDeps, route: string, p: ReturnType<typeof parseEntityList>) {
  const { cursor, limit, ...bind } = p;
  await sendPage(ctx, deps, {
    route,
    bind,
    cursor,
    limit,
    index: 'entities',
    body: (reader, after) => toEntityListBody(p, reader.generation.currentCycle, after),
  });
}

/** The entity row for an id or slug, or 404. */
async function findEntity(ctx: AppContext, deps: RouteDeps, idOrSlug: string, entityType?: string): Promise<{ reader: Reader; id: string; row: Row }> {
  const { reader, row } = await firstRow(ctx, deps, 'entities', toEntityLookupBody(idOrSlug, entityType), 'Entity not found.');
  return { reader, id: String(row.id), row };
}

/** Entity sources answer the nested source object; facts and relations their rows, passed through. */
const sourceOf = (s: Rowed) => (s.row.source ?? s.row) as Row;

const SUBROUTES = {
  facts: { index: 'facts', body: toEntityFactsBody, toRecord: undefined },
  relations: { index: 'relations', body: toEntityRelationsBody, toRecord: undefined },
  sources: { index: 'entity_sources', body: toEntitySourcesBody, toRecord: sourceOf },
} as const;

/** Rows of each section that `/history` includes (the reference returned them all, unbounded). */
const HISTORY_LIMIT = 200;

export function entityRoutes(router: AppRouter, deps: RouteDeps): void {
  const SEARCH_PARAMS = [...LIST_PARAMS, 'q', 'type', 'entityType', 'profile'];

  // One handler, as in the reference: `/v1/search` without `q` is the entity list (the explorer's
  // opening tab). Both bind their cursors to `/v1/entities`, so the two answer the same page.
  const entityList = (ctx: AppContext) => listEntities(ctx, deps, '/v1/entities', parseEntityList(takeParams(ctx.query, SEARCH_PARAMS), deps));
  router.get('/v1/search', entityList);
  router.get('/v1/entities', entityList);

  router.get('/v1/entities/:idOrSlug', async (ctx) => {
    takeParams(ctx.query, []);
    const { row } = await findEntity(ctx, deps, ctx.params.idOrSlug!);
    ctx.body = toEnvelope(row, deps.meta);
  });

  for (const [name, sub] of Object.entries(SUBROUTES)) {
    const route = `/v1/entities/:idOrSlug/${name}`;
    router.get(route, async (ctx) => {
      const params = takeParams(ctx.query, ['limit', 'cursor']);
      const limit = parseLimit(params.limit);
      const { id } = await findEntity(ctx, deps, ctx.params.idOrSlug!);
      await sendPage(ctx, deps, {
        route,
        bind: { id },
        cursor: text(params, 'cursor'),
        limit,
        index: sub.index,
        body: (_reader, after) => sub.body(id, limit, after),
        toRecord: sub.toRecord,
      });
    });
  }

  router.get('/v1/entities/:idOrSlug/history', async (ctx) => {
    takeParams(ctx.query, []);
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
      deps.meta,
    );
  });

  // Static types (items, materials, enemies, ships, ...: ids ending in `:type:<n>`), looked up by
  // their numeric type id in one environment (the reference matched `%:type:<id>` in any).
  router.get('/v1/types', (ctx) =>
    listEntities(ctx, deps, '/v1/types', parseEntityList(takeParams(ctx.query, SEARCH_PARAMS), deps, { staticTypes: true })),
  );
  router.get('/v1/types/:typeId', async (ctx) => {
    const params = takeParams(ctx.query, ['environment']);
    const environment = text(params, 'environment') ?? deps.config.defaultEnvironment;
    const { row } = await firstRow(ctx, deps, 'entities', toStaticTypeLookupBody(ctx.params.typeId!, environment), 'Static type not found.');
    ctx.body = toEnvelope(row, deps.meta);
  });

  const TYPED_PARAMS = [...LIST_PARAMS, 'q'];
  for (const [collection, entityType] of Object.entries(TYPED_COLLECTIONS)) {
    const accepted = collection === 'characters' ? [...TYPED_PARAMS, 'profile'] : TYPED_PARAMS;
    router.get(`/v1/${collection}`, (ctx) =>
      listEntities(ctx, deps, `/v1/${collection}`, parseEntityList(takeParams(ctx.query, accepted), deps, { entityType })),
    );
    router.get(`/v1/${collection}/:idOrSlug`, async (ctx) => {
      takeParams(ctx.query, []);
      const { row } = await findEntity(ctx, deps, ctx.params.idOrSlug!, entityType);
      ctx.body = toEnvelope(row, deps.meta);
    });
  }
}
