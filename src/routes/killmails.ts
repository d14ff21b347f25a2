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
import { KILLER, LIST, NPC, Q, REPORTER, SYSTEM, VICTIM, listParams } from '../query/params.ts';
import { type KillmailListParams, toKillmailListBody } from '../query/timeline.ts';
import type { AppContext, AppRouter, RouteDeps } from './context.ts';
import { list, one, route } from './operation.ts';
import { sendPage } from './page.ts';
import { ref } from './records.ts';

/** The list view and the exported row of one killmail, or 404. */
async function findKillmail(ctx: AppContext, deps: RouteDeps): Promise<{ view: Row; original: Row }> {
  const reader = await deps.search.reader();
  ctx.state.generation = reader.generation.generation;
  const found = await reader.getWithOriginal<{ row: Row }>('killmails', ctx.params.id!);
  if (!found) throw ApiError.notFound('Killmail not found.');
  return { view: found.source.row, original: found.original };
}

export function killmailRoutes(router: AppRouter, deps: RouteDeps): void {
  const query = [...LIST, Q, SYSTEM, VICTIM, KILLER, REPORTER, NPC] as const;
  route(router, '/v1/killmails', { summary: 'Killmails, newest first', query, answer: list(ref('Killmail')) }, async (ctx, params) => {
    const { cursor, limit, ...scope } = listParams(params, deps.config.defaultEnvironment);
    const { q, system, victim, killer, reporter, npc } = params;
    const bind: Omit<KillmailListParams, 'limit'> = { ...scope, q, system, victim, killer, reporter, npc };
    await sendPage(ctx, deps, {
      route: '/v1/killmails',
      bind,
      cursor,
      limit,
      index: 'killmails',
      body: (reader, after) => toKillmailListBody({ ...bind, limit }, reader.generation.currentCycle, after),
    });
  });

  route(router, '/v1/killmails/:id', { summary: 'A killmail', query: [], answer: one(ref('Killmail')) }, async (ctx) => {
    const { view, original } = await findKillmail(ctx, deps);
    ctx.body = toEnvelope(detailOf(original, view), deps.meta);
  });

  // The registry's shape: the flat record as reported, `raw` included (the reference's worker
  // answered only the `raw` member, and a 404 "Route not found." when it was absent).
  route(router, '/v1/killmails/:id/raw', { summary: 'A killmail as reported', query: [], answer: one(ref('KillmailRaw')) }, async (ctx) => {
    const { original } = await findKillmail(ctx, deps);
    ctx.body = toEnvelope(rawRecord(original), deps.meta);
  });
}
