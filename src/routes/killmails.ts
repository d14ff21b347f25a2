/**
 * `/v1/killmails` (newest first, cycle-scoped; `system`, `victim`, `killer`, `reporter`,
 * `npc` filters), `/v1/killmails/{id}` and `/v1/killmails/{id}/raw`. Rows are enriched with
 * actor names from the registry's entities (see killmail-actors.ts). List rows leave out the
 * bulky `raw` payload; the detail and `/raw` carry it.
 */
import type { Row } from '../indices/description.ts';
import { toEnvelope } from '../http/envelope.ts';
import { LIST_PARAMS, parseBoolean, parseListParams, parseQ, takeParams, text } from '../query/params.ts';
import { type KillmailListParams, toKillmailListBody } from '../query/timeline.ts';
import type { Reader } from '../search/search-service.ts';
import type { AppContext, AppRouter, RouteDeps } from './context.ts';
import { actorEntityIds, rawRecord, withActors } from './killmail-actors.ts';
import { rowById } from './detail.ts';
import { readPage } from './page.ts';

type Rowed = { row: Row };

async function enrich(reader: Reader, rows: Row[]): Promise<Row[]> {
  const found = await reader.getMany<Rowed>('entities', actorEntityIds(rows));
  const entities = new Map(found.map(({ row }) => [String(row.id), row]));
  return rows.map((row) => withActors(row, entities));
}

function findKillmail(ctx: AppContext, deps: RouteDeps): Promise<{ reader: Reader; row: Row }> {
  return rowById(ctx, deps, 'killmails', ctx.params.id!, 'Killmail not found.');
}

export function killmailRoutes(router: AppRouter, deps: RouteDeps): void {
  router.get('/v1/killmails', async (ctx) => {
    const params = takeParams(ctx.query, [...LIST_PARAMS, 'q', 'system', 'victim', 'killer', 'reporter', 'npc']);
    const { cursor, limit, ...scope } = parseListParams(params, deps.config.defaultEnvironment);
    const bind: Omit<KillmailListParams, 'limit'> = {
      ...scope,
      q: parseQ(params.q),
      system: text(params, 'system'),
      victim: text(params, 'victim'),
      killer: text(params, 'killer'),
      reporter: text(params, 'reporter'),
      npc: parseBoolean('npc', params.npc),
    };
    const page = await readPage(ctx, {
      search: deps.search,
      route: '/v1/killmails',
      bind,
      cursor,
      limit,
      index: 'killmails',
      body: (reader, after) => toKillmailListBody({ ...bind, limit }, reader.generation.currentCycle, after),
    });
    ctx.body = toEnvelope(await enrich(page.reader, page.data), deps.meta, page.nextCursor);
  });

  router.get('/v1/killmails/:id', async (ctx) => {
    takeParams(ctx.query, []);
    const { reader, row } = await findKillmail(ctx, deps);
    const [enriched] = await enrich(reader, [row]);
    ctx.body = toEnvelope(enriched, deps.meta);
  });

  // The registry's shape: the flat record as reported, `raw` included (the reference's worker
  // answered only the `raw` member, and a 404 "Route not found." when it was absent).
  router.get('/v1/killmails/:id/raw', async (ctx) => {
    takeParams(ctx.query, []);
    const { row } = await findKillmail(ctx, deps);
    ctx.body = toEnvelope(rawRecord(row), deps.meta);
  });
}
