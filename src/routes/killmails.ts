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
import { cycleGroup, groupByParameter, keyword } from '../query/groups.ts';
import { FORMAT, IDS, INCLUDE, INCLUDE_UNKNOWN, INVOLVED, KILLER, LABEL, LIST, NPC, Q, REPORTER, SIDE, SINCE, SINCE_INDEXED, SYSTEM, UNTIL, VICTIM, boundSort, listParams, sortParameter } from '../query/route-parameters.ts';
import { selectParameter } from '../query/select.ts';
import { type KillmailListParams, TIMELINE_COUNT_UP_TO, TIMELINE_SORTS, throughGeneration, toKillmailListQuery } from '../query/timeline.ts';
import type { AppContext, AppRouter, RouteDeps } from './context.ts';
import { list, one, route } from './operation.ts';
import { indexedThrough } from './events.ts';
import { groupRequest } from './list-request.ts';
import { sendList } from './list.ts';
import { fieldsOf, ref } from './records.ts';

/** What `select` can keep, and a CSV's columns without it. */
const FIELDS = fieldsOf('Killmail');

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
  const reader = await deps.search.reader();
  ctx.state.generation = reader.generation.generation;
  const found = await reader.getWithOriginal<{ row: Row }>('killmails', ctx.params.id!);
  if (!found) {
    const removedAt = await reader.removedAt('killmails', ctx.params.id!);
    throw removedAt ? ApiError.gone('This killmail', removedAt) : ApiError.notFound('Killmail not found.');
  }
  return { view: found.source.row, original: found.original };
}

export function killmailRoutes(router: AppRouter, deps: RouteDeps): void {
  const query = [
    ...LIST,
    Q,
    IDS,
    INVOLVED,
    SIDE,
    SYSTEM,
    VICTIM,
    KILLER,
    REPORTER,
    NPC,
    LABEL,
    SINCE,
    UNTIL,
    SINCE_INDEXED,
    INCLUDE,
    sortParameter(TIMELINE_SORTS, '`occurredAt:desc` (newest first); `indexedAt:asc` in the order rows became visible'),
    selectParameter(FIELDS),
    groupByParameter(GROUPS, 'occurredAt'),
    INCLUDE_UNKNOWN,
    FORMAT,
  ] as const;
  route(router, '/v1/killmails', { summary: 'Killmails, newest first', query, answer: list(ref('Killmail')) }, async (ctx, params) => {
    const { cursor, limit, ...scope } = listParams(params, deps.config.defaultEnvironment);
    const { q, system, victim, killer, reporter, npc, label, since, until, since_indexed: sinceIndexed, id: ids, involved, side } = params;
    if (side !== undefined && involved === undefined) throw ApiError.badParameter('side', 'side narrows involved: give involved=<entity id> with it.');
    const sort = boundSort(params.sort, TIMELINE_SORTS[0]);
    const bind: Omit<KillmailListParams, 'limit'> = { ...scope, ids, q, system, victim, killer, reporter, npc, label, involved, side, since, until, sinceIndexed, sort };
    const withChanges = params.include === 'removed';
    await sendList(ctx, deps, {
      route: '/v1/killmails',
      bind: { ...bind, include: params.include },
      cursor,
      limit,
      index: 'killmails',
      query: (reader) => {
        const list = toKillmailListQuery(bind, reader.generation.currentCycle);
        return withChanges ? throughGeneration(list, reader.generation.indexedAt) : list;
      },
      withChanges,
      countUpTo: TIMELINE_COUNT_UP_TO,
      meta: indexedThrough,
      ids: ids && { asked: ids, fields: ['id'] },
      select: params.select,
      groups: groupRequest(params),
      format: params.format,
      columns: FIELDS,
    });
  });

  route(router, '/v1/killmails/:id', { summary: 'A killmail', query: [], answer: one(ref('Killmail')), mayBeGone: true }, async (ctx) => {
    const { view, original } = await findKillmail(ctx, deps);
    ctx.body = toEnvelope(detailOf(original, view), deps.meta);
  });

  // The registry's shape: the flat record as reported, `raw` included (the reference's worker
  // answered only the `raw` member, and a 404 "Route not found." when it was absent).
  route(router, '/v1/killmails/:id/raw', { summary: 'A killmail as reported', query: [], answer: one(ref('KillmailRaw')), mayBeGone: true }, async (ctx) => {
    const { original } = await findKillmail(ctx, deps);
    ctx.body = toEnvelope(rawRecord(original), deps.meta);
  });
}
