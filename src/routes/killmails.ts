/**
 * `/v1/killmails` (newest first, cycle-scoped; `system`, `victim`, `killer`, `reporter`,
 * `npc`, `label` filters), `/v1/killmails/{id}` and `/v1/killmails/{id}/raw`.
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
import { cycleGroup, keyword } from '../query/groups.ts';
import { KILLMAIL_TIMELINE } from '../query/timeline.ts';
import { type AppContext, type AppRouter, type RouteDeps, metaOf, requestReader } from './context.ts';
import { one, route } from './operation.ts';
import { ref } from './records.ts';
import { timelineListRoute } from './timeline.ts';

/** Actors group by entity id (labelled with the entity's name); `killer` by the one killer of each kill. */
const GROUPS = [
  keyword('system', 'systemId', 'entities'),
  keyword('victim', 'victimId', 'entities'),
  // `killer=` filters on every killer id of a kill (killerIds); the group is its one killer.
  { ...keyword('killer', 'killerId', 'entities'), filters: ['killerIds'] },
  keyword('reporter', 'reporterId', 'entities'),
  { name: 'npc', field: 'npc', type: 'boolean' } as const,
  keyword('label', 'labels'),
  cycleGroup,
];

/** The list view and the exported row of one killmail, or 404. */
async function findKillmail(ctx: AppContext, deps: RouteDeps): Promise<{ view: Row; original: Row }> {
  const reader = await requestReader(ctx, deps.search);
  const found = await reader.getWithOriginal<{ row: Row }>('killmails', ctx.params.id!);
  if (!found) {
    const removedAt = await reader.removedAt('killmails', ctx.params.id!);
    throw removedAt ? ApiError.gone('This killmail', removedAt) : ApiError.notFound('Killmail not found.');
  }
  return { view: found.source.row, original: found.original };
}

export function killmailRoutes(router: AppRouter, deps: RouteDeps): void {
  timelineListRoute(router, deps, { path: '/v1/killmails', summary: 'Killmails, newest first', timeline: KILLMAIL_TIMELINE, record: 'Killmail', groups: GROUPS });

  route(router, '/v1/killmails/:id', { summary: 'A killmail', query: [], answer: one(ref('Killmail')), mayBeGone: true }, async (ctx) => {
    const { view, original } = await findKillmail(ctx, deps);
    ctx.body = toEnvelope(detailOf(original, view), metaOf(ctx, deps));
  });

  // The registry's shape: the flat record as reported, `raw` included (the reference's worker
  // answered only the `raw` member, and a 404 "Route not found." when it was absent).
  route(router, '/v1/killmails/:id/raw', { summary: 'A killmail as reported', query: [], answer: one(ref('KillmailRaw')), mayBeGone: true }, async (ctx) => {
    const { original } = await findKillmail(ctx, deps);
    ctx.body = toEnvelope(rawRecord(original), metaOf(ctx, deps));
  });
}
