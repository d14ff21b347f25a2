/**
 * Battles, pure: the searches of `/v1/battles` and `/v1/battles/{id}` over the derived
 * battle_kills index (src/indices/battle-kills.ts), and the battles and their sides from what
 * those searches return.
 *
 * The rule, as the README states it: killmails of one system form a battle when each follows the
 * one before within the gap (default 15 min), two kills at least. Its id is its first killmail's.
 * Its **sides**: every participant stands for its tribe (a character's first `belongs_to` tribe
 * by id; a character without one stands for itself); NPC killers form a side of their own; the
 * others are split in two so that as many kills as possible go from one side to the other —
 * groups taken in order of the kills they took part in (then id), each put on the side against
 * which it fought more (ties: the side whose groups took part in fewer killmails so far, then the first). Per side: its
 * tribes, characters, kills (killmails a killer of the side made) and losses (its victims).
 */
import type { estypes } from '@elastic/elasticsearch';
import { type BattleActor, type BattleKill, GAP_MINUTES, battleKills, involvedAt } from '../indices/battle-kills.ts';
import { ROW } from '../indices/description.ts';
import { type ListQuery, type SearchBody, environmentScope, oneOf, reversed, term, terms, toSort } from './list.ts';
import type { AnyOf } from './route-parameters.ts';
import type { CycleScope } from './scope.ts';
import { type TimeBound, toTimeRange } from './time-range.ts';

export const BATTLE_SORTS = ['startedAt:desc', 'startedAt:asc'] as const;
export type BattleSort = (typeof BATTLE_SORTS)[number];

/** Killmails of the engagements of one page read at most: a page of battles is one search. */
export const ENGAGEMENT_KILLS = 10_000;
/** Killmails a battle's detail lists (the rest: the killmails list of its system and time). */
export const DETAIL_KILLS = 500;

const MINUTE_MS = 60_000;

export interface BattleListParams {
  environment: string;
  scope: CycleScope;
  system?: AnyOf;
  involved?: AnyOf;
  since?: TimeBound;
  until?: TimeBound;
  /** Minutes. */
  gap: number;
  sort?: BattleSort;
}

/** The `involved` values of an entity the battle reaches within `gap` minutes. */
function reachedWithin(id: string, gap: number): string[] {
  return Array.from({ length: gap - GAP_MINUTES.min + 1 }, (_, i) => involvedAt(id, GAP_MINUTES.min + i));
}

/** The killmails that start a battle at this gap: `after ≤ gap < before`, newest first (or oldest). */
export function toBattleStartsQuery(params: BattleListParams, currentCycle: number): ListQuery {
  const gap = params.gap * MINUTE_MS;
  const filter = [
    ...environmentScope(params.environment, params.scope, currentCycle),
    ...(params.system ? [oneOf('systemId', params.system)] : []),
    // An entity reached within this gap (src/indices/battle-kills.ts): `<id>@5` … `<id>@<gap>`.
    ...(params.involved ? [terms('involved', params.involved.flatMap((id) => reachedWithin(id, params.gap)))] : []),
    ...toTimeRange('occurredAt', params.since, params.until),
    { range: { after: { lte: gap } } },
    { range: { before: { gt: gap } } },
  ];
  const sort = toSort(battleKills, battleKills.sort);
  return { filter, sort: params.sort === 'startedAt:asc' ? reversed(sort) : sort, indexSorted: true };
}

/** The killmails of these engagements, oldest first: every battle of a page lies in one of them. */
export function toEngagementsBody(engagements: readonly string[]): SearchBody {
  return {
    size: ENGAGEMENT_KILLS,
    track_total_hits: false,
    query: { bool: { filter: [{ terms: { engagement: [...engagements] } }] } },
    sort: [...toSort(battleKills, battleKills.sort).map((clause) => reversed([clause])[0]!)] as estypes.SortCombinations[],
    stored_fields: '_none_',
    docvalue_fields: [ROW],
  };
}

/** The derived row of one killmail: a battle's start, with its engagement. */
export function toBattleKillBody(id: string): SearchBody {
  return { size: 1, track_total_hits: false, query: { bool: { filter: [term('id', id)] } }, stored_fields: '_none_', docvalue_fields: [ROW] };
}

export interface SideCharacter {
  id: string;
  name?: string;
}

export interface BattleSide {
  /** `a`, `b`, or `npc`. */
  side: 'a' | 'b' | 'npc';
  tribes: { id: string; name?: string }[];
  characters: SideCharacter[];
  kills: number;
  losses: number;
}

export interface Battle {
  id: string;
  environment: string;
  systemId: string;
  systemName?: string;
  /** Absent for an uncycled battle. */
  cycle?: number;
  /** Minutes. */
  gap: number;
  startedAt: string;
  endedAt: string;
  killCount: number;
  sides: BattleSide[];
  href: string;
}

/** Whether a killmail starts a battle at this gap (ms). */
export function startsAt(kill: Pick<BattleKill, 'before' | 'after'>, gapMs: number): boolean {
  return kill.after !== null && kill.after <= gapMs && (kill.before === null || kill.before > gapMs);
}

/** The killmails of the battle that `start` starts at this gap, from its engagement's killmails (oldest first). */
export function battleKillsOf(start: string, engagement: readonly BattleKill[], gapMs: number): BattleKill[] {
  const at = engagement.findIndex((kill) => kill.id === start);
  if (at < 0) return [];
  const kills = [engagement[at]!];
  for (let i = at + 1; i < engagement.length && engagement[i]!.before !== null && engagement[i]!.before! <= gapMs; i += 1) kills.push(engagement[i]!);
  return kills;
}

/** The battle a killmail belongs to at this gap: its start's id, or undefined when it is in none. */
export function battleStartOf(id: string, engagement: readonly BattleKill[], gapMs: number): string | undefined {
  let at = engagement.findIndex((kill) => kill.id === id);
  if (at < 0) return undefined;
  while (at > 0 && engagement[at]!.before !== null && engagement[at]!.before! <= gapMs) at -= 1;
  return startsAt(engagement[at]!, gapMs) ? engagement[at]!.id : undefined;
}

const NPC = 'npc';

/** What a participant stands for: its tribe, else itself. */
const groupOf = (actor: BattleActor) => actor.tribe ?? actor.id;

/** The sides of a battle, by the rule above. */
export function sidesOf(kills: readonly BattleKill[]): BattleSide[] {
  const weight = new Map<string, Map<string, number>>();
  const involvement = new Map<string, number>();
  const link = (a: string, b: string) => {
    if (!weight.has(a)) weight.set(a, new Map());
    weight.get(a)!.set(b, (weight.get(a)!.get(b) ?? 0) + 1);
  };
  for (const kill of kills) {
    const killers = new Set(kill.killers.map(groupOf));
    if (kill.npc && killers.size === 0) killers.add(NPC);
    const victim = kill.victim && groupOf(kill.victim);
    for (const group of new Set([...killers, ...(victim ? [victim] : [])])) involvement.set(group, (involvement.get(group) ?? 0) + 1);
    for (const killer of killers) {
      if (killer === NPC || victim === undefined || killer === victim) continue;
      link(killer, victim);
      link(victim, killer);
    }
  }
  const order = [...involvement.keys()].filter((g) => g !== NPC).sort((a, b) => involvement.get(b)! - involvement.get(a)! || (a < b ? -1 : 1));
  const sideOf = new Map<string, 0 | 1>();
  const load: [number, number] = [0, 0];
  for (const group of order) {
    const against: [number, number] = [0, 0];
    for (const [other, w] of weight.get(group) ?? []) {
      const side = sideOf.get(other);
      if (side !== undefined) against[side] += w;
    }
    // On side 0 it fights those on side 1: put it where more of its kills cross.
    const side: 0 | 1 = against[1] > against[0] ? 0 : against[0] > against[1] ? 1 : load[1] < load[0] ? 1 : 0;
    sideOf.set(group, side);
    load[side] += involvement.get(group)!;
  }
  const sides: BattleSide[] = [
    { side: 'a', tribes: [], characters: [], kills: 0, losses: 0 },
    { side: 'b', tribes: [], characters: [], kills: 0, losses: 0 },
    { side: 'npc', tribes: [], characters: [], kills: 0, losses: 0 },
  ];
  const indexOf = (group: string) => (group === NPC ? 2 : sideOf.get(group)!);
  const seen = new Set<string>();
  const meet = (actor: BattleActor) => {
    const side = sides[indexOf(groupOf(actor))]!;
    if (!seen.has(actor.id)) {
      seen.add(actor.id);
      side.characters.push({ id: actor.id, ...(actor.name && { name: actor.name }) });
    }
    if (actor.tribe && !seen.has(actor.tribe)) {
      seen.add(actor.tribe);
      side.tribes.push({ id: actor.tribe, ...(actor.tribeName && { name: actor.tribeName }) });
    }
  };
  for (const kill of kills) {
    for (const actor of [...kill.killers, ...(kill.victim ? [kill.victim] : [])]) meet(actor);
    const killers = new Set(kill.killers.map((actor) => indexOf(groupOf(actor))));
    if (kill.npc && killers.size === 0) killers.add(2);
    for (const side of killers) sides[side]!.kills += 1;
    if (kill.victim) sides[indexOf(groupOf(kill.victim))]!.losses += 1;
  }
  for (const side of sides) {
    side.characters.sort((a, b) => (a.id < b.id ? -1 : 1));
    side.tribes.sort((a, b) => (a.id < b.id ? -1 : 1));
  }
  // Side b only where two sides met; the NPC side only where NPCs killed.
  return sides.filter((side) => side.side === 'a' || side.kills + side.losses > 0);
}

/** A battle's record from its killmails (oldest first, two at least). */
export function battleOf(kills: readonly BattleKill[], gap: number): Battle {
  const start = kills[0]!;
  return {
    id: start.id,
    environment: start.environment,
    systemId: start.systemId,
    ...(start.systemName && { systemName: start.systemName }),
    ...(start.cycle > 0 && { cycle: start.cycle }),
    gap,
    startedAt: start.occurredAt,
    endedAt: kills.at(-1)!.occurredAt,
    killCount: kills.length,
    sides: sidesOf(kills),
    href: `/v1/battles/${encodeURIComponent(start.id)}${gap === GAP_MINUTES.default ? '' : `?gap=${gap}`}`,
  };
}

export { GAP_MINUTES };
export const gapMs = (minutes: number) => minutes * MINUTE_MS;
