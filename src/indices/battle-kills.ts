/**
 * Battles start here: an index the loader derives from the generation's killmails,
 * once they are loaded, rather than from a bundle file. A battle is a run of killmails of one
 * system whose consecutive times lie within a gap of each other (`gap=`, 5 to 60 minutes), two
 * kills at least. Each killmail of a system is kept with the time since the one before it and
 * until the one after it (`before`, `after`, in ms), so that for any gap g:
 *
 * - the killmails that **start** a battle are those with `after ≤ g < before`: one range search,
 *   in the order of the killmails index (newest first), paged by `search_after` like any list;
 * - a battle is its start and the killmails that follow while `before ≤ g`.
 *
 * Killmails are grouped into **engagements**: runs at the widest gap (60 min). Every battle at
 * any allowed gap lies inside one, so a page of battles reads its engagements whole (one terms
 * search on `engagement`) and splits them (src/query/battles.ts). Killmails alone in their
 * engagement can start no battle and are not kept.
 *
 * A killmail that can start a battle at some allowed gap also keeps, as `involved`, every
 * character and tribe of the killmails from it to its engagement's end, each as `<id>@<m>`: m is
 * the smallest gap in whole minutes (at least the smallest allowed) at which the battle it starts
 * reaches that entity's first killmail. The entity took part in the battle at gap g exactly when
 * m ≤ g, so `involved=` is one `terms` filter on `<id>@5` … `<id>@g`: exact, counted, paged.
 */
import battleKillsMapping from '../../mappings/battle_kills.json' with { type: 'json' };
import { type IndexDescription, type LoadContext, type MappingFile, NANOS_FORMAT, type Row, object, rowOfHit, str } from './description.ts';

/** The gaps a battle may be asked for, in minutes (`gap=`), and its default. */
export const GAP_MINUTES = { min: 5, max: 60, default: 15 } as const;
const MINUTE_MS = 60_000;
/** `before`/`after` of a killmail with none before or after it in its engagement. */
export const NO_NEIGHBOUR = Number.MAX_SAFE_INTEGER;

/** A character met in a battle, with its tribe (its first `belongs_to` tribe, by id) where it has one. */
export interface BattleActor {
  id: string;
  name?: string;
  tribe?: string;
  tribeName?: string;
}

/** A killmail as battles read it: the row of the derived index. */
export interface BattleKill {
  id: string;
  environment: string;
  systemId: string;
  systemName?: string;
  cycle: number;
  occurredAt: string;
  /** The first killmail of its engagement. */
  engagement: string;
  /** Milliseconds since the killmail before it in its system, and until the one after it; null at the engagement's ends. */
  before: number | null;
  after: number | null;
  victim?: BattleActor;
  /** Killer characters (an NPC killer is `npc`, not an actor). */
  killers: BattleActor[];
  npc: boolean;
}

export interface BattleKillDoc {
  id: string;
  environment: string;
  cycle: number;
  systemId: string;
  occurredAt: string;
  engagement: string;
  before: number;
  after: number;
  involved?: string[];
  row: BattleKill;
}

/** Whether a killmail starts a battle at some allowed gap: `after ≤ g < before` for a g in range. */
export function canStart(kill: Pick<BattleKill, 'before' | 'after'>): boolean {
  const before = kill.before ?? NO_NEIGHBOUR;
  return kill.after !== null && kill.after <= GAP_MINUTES.max * MINUTE_MS && before > Math.max(kill.after, GAP_MINUTES.min * MINUTE_MS);
}

/** Every character and tribe of a killmail: who took part in it. */
export function participantsOf(kill: Pick<BattleKill, 'victim' | 'killers'>): string[] {
  return [kill.victim, ...kill.killers].flatMap((actor) => (actor ? [actor.id, ...(actor.tribe ? [actor.tribe] : [])] : []));
}

/** `involved` of an entity reached at gap `minutes` or wider (see the top of this file). */
export const involvedAt = (id: string, minutes: number) => `${id}@${minutes}`;

/** The derived rows of one engagement (killmails of one system, sorted, ≥ 2, no gap over the widest). */
export function engagementRows(kills: readonly Omit<BattleKill, 'engagement' | 'before' | 'after'>[], ms: readonly number[]): (BattleKill & { involved?: string[] })[] {
  const rows: BattleKill[] = kills.map((kill, i) => ({
    ...kill,
    engagement: kills[0]!.id,
    before: i > 0 ? ms[i]! - ms[i - 1]! : null,
    after: i < kills.length - 1 ? ms[i + 1]! - ms[i]! : null,
  }));
  return rows.map((row, i) => {
    if (!canStart(row)) return row;
    // Walking on from the start: the widest gap crossed so far is the gap the battle needs to reach here.
    const reach = new Map<string, number>();
    let widest = 0;
    for (let j = i; j < rows.length; j += 1) {
      if (j > i) widest = Math.max(widest, rows[j]!.before!);
      const minutes = Math.max(GAP_MINUTES.min, Math.ceil(widest / MINUTE_MS));
      for (const id of participantsOf(rows[j]!)) if (!reach.has(id)) reach.set(id, minutes);
    }
    return { ...row, involved: [...reach].map(([id, minutes]) => involvedAt(id, minutes)).sort() };
  });
}

/** What the derivation reads of each killmail (doc values of the killmails index, and its list view for names). */
const SCANNED = ['id', 'environment', 'systemId', { field: 'occurredAt', format: NANOS_FORMAT }, 'cycle', 'victimId', 'killerIds', 'npc'];

type Scanned = { fields?: Record<string, unknown[]> };

const first = (hit: Scanned, field: string) => hit.fields?.[field]?.[0];
const isCharacter = (id: unknown): id is string => typeof id === 'string' && id.startsWith('character:');

/** Killmails of one page as battles read them, each character with its tribe and every name the generation knows. */
async function killsOf(hits: readonly Scanned[], context: LoadContext): Promise<{ kill: Omit<BattleKill, 'engagement' | 'before' | 'after'>; ms: number }[]> {
  const characters = [...new Set(hits.flatMap((hit) => [first(hit, 'victimId'), ...(hit.fields?.killerIds ?? [])].filter(isCharacter)))];
  const tribesOf = new Map<string, string>();
  for (let at = 0; at < characters.length; at += 1000) {
    for (const [character, tribes] of await context.lookupTribes(characters.slice(at, at + 1000))) if (tribes.length) tribesOf.set(character, [...tribes].sort()[0]!);
  }
  const tribeNames = await context.lookupEntities([...new Set(tribesOf.values())]);
  const nameOf = (row: Row | undefined) => str(row?.displayName) ?? str(row?.name);
  return hits.map((hit) => {
    const view = rowOfHit(hit) ?? {};
    const actor = (id: string, name: unknown): BattleActor => {
      const tribe = tribesOf.get(id);
      return { id, ...(str(name) && { name: str(name) }), ...(tribe && { tribe, ...(nameOf(tribeNames.get(tribe)) && { tribeName: nameOf(tribeNames.get(tribe)) }) }) };
    };
    const killerIds = (hit.fields?.killerIds ?? []).filter(isCharacter);
    const victimId = str(first(hit, 'victimId'));
    const occurredAt = String(first(hit, 'occurredAt'));
    const killer = object(view.killer);
    const kill = {
      id: String(first(hit, 'id')),
      environment: String(first(hit, 'environment')),
      systemId: String(first(hit, 'systemId')),
      ...(str(view.systemName) && { systemName: str(view.systemName) }),
      cycle: Number(first(hit, 'cycle')),
      occurredAt,
      ...(victimId && { victim: actor(victimId, view.victimName) }),
      // The one killer's name the view holds belongs to the killer character it names.
      killers: killerIds.map((id) => actor(id, killerIds.length === 1 || killer?.entityId === id ? view.killerName : undefined)),
      npc: first(hit, 'npc') === true,
    };
    return { kill, ms: Date.parse(occurredAt) };
  });
}

/**
 * The derived rows, from the killmails in order of environment, system, instant and id: each
 * system's killmails cut into engagements where the gap exceeds the widest, lone ones left out.
 */
async function* deriveRows(pages: AsyncIterable<readonly Scanned[]>, context: LoadContext): AsyncGenerator<Row> {
  let kills: Omit<BattleKill, 'engagement' | 'before' | 'after'>[] = [];
  let ms: number[] = [];
  const flush = function* () {
    if (kills.length >= 2) yield* engagementRows(kills, ms) as unknown as Row[];
    kills = [];
    ms = [];
  };
  for await (const page of pages) {
    for (const { kill, ms: at } of await killsOf(page, context)) {
      const last = kills.at(-1);
      if (last && (last.environment !== kill.environment || last.systemId !== kill.systemId || at - ms.at(-1)! > GAP_MINUTES.max * MINUTE_MS)) yield* flush();
      kills.push(kill);
      ms.push(at);
    }
  }
  yield* flush();
}

export const battleKills: IndexDescription<BattleKillDoc> = {
  name: 'battle_kills',
  files: [],
  mapping: battleKillsMapping as MappingFile,
  requiredFields: [],
  // Killmail documents carry their actors and NPC proof (entities, relations); tribes come from relations.
  dependsOn: ['killmails', 'entities', 'relations'],
  derive: {
    from: 'killmails',
    query: { exists: { field: 'systemId' } },
    sort: ['environment', 'systemId', 'occurredAt', 'id'],
    fields: SCANNED,
    rows: deriveRows,
  },
  sort: [
    { field: 'occurredAt', order: 'desc' },
    { field: 'id', order: 'desc' },
  ],
  toDocument(row) {
    const { involved, ...kill } = row as unknown as BattleKill & { involved?: string[] };
    return {
      id: kill.id,
      environment: kill.environment,
      cycle: kill.cycle,
      systemId: kill.systemId,
      occurredAt: kill.occurredAt,
      engagement: kill.engagement,
      before: kill.before ?? NO_NEIGHBOUR,
      after: kill.after ?? NO_NEIGHBOUR,
      ...(involved && { involved }),
      row: kill,
    };
  },
};
