/**
 * `/v1/battles` and `/v1/battles/{id}`: killmails of one system within `gap` minutes
 * of each other, read from the battle_kills index the loader derives from the killmails
 * (src/indices/battle-kills.ts), split and given sides by src/query/battles.ts.
 *
 * The list is a list like any other over the killmails that start a battle at this gap (count,
 * cursor, `select`, files), each page's starts then expanded into their battles with one more
 * search: the engagements they lie in, whole.
 */
import { ApiError } from '../errors.ts';
import { toEnvelope } from '../http/envelope.ts';
import type { BattleKill } from '../indices/battle-kills.ts';
import { type Row, rowOfHit } from '../indices/description.ts';
import {
  BATTLE_SORTS,
  DETAIL_KILLS,
  ENGAGEMENT_KILLS,
  GAP_MINUTES,
  battleKillsOf,
  battleOf,
  battleStartOf,
  gapMs,
  startsAt,
  toBattleKillBody,
  toBattleStartsQuery,
  toEngagementsBody,
} from '../query/battles.ts';
import { FORMAT, GAP, INVOLVED, LIST, SINCE, SYSTEM, UNTIL, boundSort, listParams, sortParameter } from '../query/route-parameters.ts';
import { selectParameter } from '../query/select.ts';
import type { Reader } from '../search/search-service.ts';
import { type AppRouter, type RouteDeps, metaOf, requestReader } from './context.ts';
import { sendList } from './list.ts';
import { list, one, route } from './operation.ts';
import { fieldsOf, ref } from './records.ts';

/** What `select` can keep, and a CSV's columns without it. */
const FIELDS = fieldsOf('Battle');

/** The killmails of these engagements, by engagement, oldest first. */
async function engagementsOf(reader: Reader, ids: readonly string[]): Promise<Map<string, BattleKill[]>> {
  const byEngagement = new Map<string, BattleKill[]>();
  if (ids.length === 0) return byEngagement;
  const { hits } = await reader.search('battle_kills', toEngagementsBody([...new Set(ids)]));
  if (hits.hits.length >= ENGAGEMENT_KILLS) throw ApiError.unavailable('These battles hold more killmails than one page reads: narrow the list (system, since, until, limit).');
  for (const hit of hits.hits) {
    const kill = rowOfHit(hit) as unknown as BattleKill;
    if (!byEngagement.has(kill.engagement)) byEngagement.set(kill.engagement, []);
    byEngagement.get(kill.engagement)!.push(kill);
  }
  return byEngagement;
}

/** A page of starts as their battles at this gap. */
async function battlesOf(reader: Reader, starts: Row[], gap: number): Promise<Row[]> {
  const kills = starts as unknown as BattleKill[];
  const engagements = await engagementsOf(reader, kills.map((k) => k.engagement));
  return kills.map((start) => battleOf(battleKillsOf(start.id, engagements.get(start.engagement) ?? [], gapMs(gap)), gap) as unknown as Row);
}

export function battleRoutes(router: AppRouter, deps: RouteDeps): void {
  const query = [...LIST, SYSTEM, INVOLVED, SINCE, UNTIL, GAP, sortParameter(BATTLE_SORTS, '`startedAt:desc` (newest first)'), selectParameter(FIELDS), FORMAT] as const;
  const summary = 'Battles: killmails of one system each within `gap` minutes of the one before (two at least), with their sides';
  route(router, '/v1/battles', { summary, query, answer: list(ref('Battle')), cost: 'search' }, async (ctx, params) => {
    const { cursor, limit, ...scope } = listParams(params, deps.config.defaultEnvironment);
    const { system, involved, since, until } = params;
    const gap = params.gap ?? GAP_MINUTES.default;
    const bind = { ...scope, system, involved, since, until, gap, sort: boundSort(params.sort, BATTLE_SORTS[0]) };
    await sendList(ctx, deps, {
      route: '/v1/battles',
      bind,
      cursor,
      limit,
      index: 'battle_kills',
      query: ({ currentCycle }) => toBattleStartsQuery({ ...scope, system, involved, since, until, gap, sort: params.sort }, currentCycle),
      expand: (reader, starts) => battlesOf(reader, starts, gap),
      select: params.select,
      format: params.format,
      columns: FIELDS,
    });
  });

  const detail = { summary: 'A battle by its first killmail: its sides and its killmails', query: [GAP] as const, answer: one(ref('BattleDetail')), cost: 'search' } as const;
  route(router, '/v1/battles/:id', detail, async (ctx, params) => {
    const reader = await requestReader(ctx, deps.search);
    const id = ctx.params.id!;
    const gap = params.gap ?? GAP_MINUTES.default;
    const hit = (await reader.search('battle_kills', toBattleKillBody(id))).hits.hits[0];
    if (!hit) throw ApiError.notFound('No battle: this is not the id of a killmail with another one in its system within 60 minutes.');
    const start = rowOfHit(hit) as unknown as BattleKill;
    const engagement = (await engagementsOf(reader, [start.engagement])).get(start.engagement) ?? [];
    if (!startsAt(start, gapMs(gap))) {
      const battle = battleStartOf(id, engagement, gapMs(gap));
      throw ApiError.notFound(battle ? `Killmail ${id} is in the battle that ${battle} starts at gap ${gap}.` : `Killmail ${id} is in no battle at gap ${gap}.`);
    }
    const kills = battleKillsOf(id, engagement, gapMs(gap));
    const battle = battleOf(kills, gap);
    const shown = kills.slice(0, DETAIL_KILLS).map((k) => k.id);
    // Where the generation keeps a killmail's row is the reader's to know (src/search).
    const rows = (await reader.getMany<{ row: Row }>('killmails', shown)).map(({ row }) => row);
    // `until` is exclusive: a millisecond past the last kill (another kill that close would be in the battle).
    const until = new Date(Date.parse(battle.endedAt) + 1).toISOString();
    const href = `/v1/killmails?environment=${encodeURIComponent(battle.environment)}&system=${encodeURIComponent(battle.systemId)}&since=${encodeURIComponent(battle.startedAt)}&until=${encodeURIComponent(until)}&cycles=all&sort=occurredAt:asc`;
    ctx.body = toEnvelope(
      { battle, killmails: rows, killmailsTruncated: battle.killCount > shown.length, killmailsHref: href },
      metaOf(ctx, deps),
    );
  });
}
