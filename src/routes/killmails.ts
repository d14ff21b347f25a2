/**
 * `/v1/killmails` (newest first, cycle-scoped; `system`, `victim`, `killer`, `reporter`,
 * `npc` filters), `/v1/killmails/{id}` and `/v1/killmails/{id}/raw`.
 *
 * Actors and names were resolved from the registry's entities when the generation was loaded
 * (src/indices/killmail-actors.ts), so a list page is one search that returns the stored list
 * view as it is: actors filled, the bulky `raw` payload left out. The detail lays that view
 * over the exported row; `/raw` answers the exported row as reported.
 */
import { toEnvelope } from '../http/envelope.ts';
import { ApiError } from '../errors.ts';
import type { Row } from '../indices/description.ts';
import { detailOf, rawRecord } from '../indices/killmail-actors.ts';
import { LIST_PARAMS, parseBoolean, parseListParams, parseQ, takeParams, text } from '../query/params.ts';
import { type KillmailListParams, toKillmailListBody } from '../query/timeline.ts';
import type { AppContext, AppRouter, RouteDeps } from './context.ts';
import { sendPage } from './page.ts';

/** The list view and the exported row of one killmail, or 404. */
async function findKillmail(ctx: AppContext, deps: RouteDeps): Promise<{ view: Row; original: Row }> {
  takeParams(ctx.query, []);
  const reader = await deps.search.reader();
  ctx.state.generation = reader.generation.generation;
  const found = await reader.getWithOriginal<{ row: Row }>('killmails', ctx.params.id!);
  if (!found) throw ApiError.notFound('Killmail not found.');
  return { view: found.source.row, original: found.original };
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
    await sendPage(ctx, deps, {
      route: '/v1/killmails',
      bind,
      cursor,
      limit,
      index: 'killmails',
      body: (reader, after) => toKillmailListBody({ ...bind, limit }, reader.generation.currentCycle, after),
    });
  });

  router.get('/v1/killmails/:id', async (ctx) => {
    const { view, original } = await findKillmail(ctx, deps);
    ctx.body = toEnvelope(detailOf(original, view), deps.meta);
  });

  // The registry's shape: the flat record as reported, `raw` included (the reference's worker
  // answered only the `raw` member, and a 404 "Route not found." when it was absent).
  router.get('/v1/killmails/:id/raw', async (ctx) => {
    const { original } = await findKillmail(ctx, deps);
    ctx.body = toEnvelope(rawRecord(original), deps.meta);
  });
}
