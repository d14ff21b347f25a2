/**
 * The labels a computation over the bundle files gives each killmail (the gateway's
 * rule is src/indices/killmail-labels.ts): from killmails.jsonl and the relations that prove NPC
 * kills (`killer` → an enemy) and tribes (`belongs_to` → a tribe).
 */
import type { BundleRow } from '../../generator/read-bundle.ts';

export const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);
export const obj = (v: unknown): BundleRow | undefined => (v !== null && typeof v === 'object' ? (v as BundleRow) : undefined);

/** A killmail's actors as the loader keys them (src/indices/timeline.ts): the victim, the killer characters, every killer id, the one killer. */
export function actorsOf(row: BundleRow): { victimId?: string; killerCharacters: string[]; killerIds: string[]; killerId?: string; systemId?: string } {
  const victim = obj(row.victim);
  const killer = obj(row.killer);
  const system = obj(row.system);
  const victimId = text(row.victimCharacterId) ?? text(victim?.entityId) ?? text(victim?.rawId);
  const killerCharacter = text(row.killerCharacterId) ?? (killer?.entityType === 'character' ? text(killer.entityId) ?? text(killer.rawId) : undefined);
  const killerTypeId = text(row.killerTypeId) ?? text(killer?.typeId);
  const killerIds = [...new Set([killerCharacter, killerTypeId, text(killer?.entityId)].filter((id): id is string => id !== undefined))];
  return {
    victimId,
    killerCharacters: killerIds.filter((id) => id.startsWith('character:') && id !== victimId),
    killerIds,
    killerId: text(killer?.entityId) ?? killerCharacter ?? killerTypeId,
    systemId: text(row.systemId) ?? text(system?.entityId) ?? text(system?.rawId),
  };
}

/** Character id → its tribes (`belongs_to` relations to a tribe). */
export function tribesOf(relations: readonly BundleRow[]): Map<string, Set<string>> {
  const tribes = new Map<string, Set<string>>();
  for (const r of relations) {
    if (r.predicate !== 'belongs_to' || !String(r.objectEntityId).startsWith('tribe:')) continue;
    tribes.set(r.subjectEntityId, (tribes.get(r.subjectEntityId) ?? new Set()).add(r.objectEntityId));
  }
  return tribes;
}

/** Killmail id → its labels, in the order the API lists them. */
export function expectedLabels(killmails: readonly BundleRow[], relations: readonly BundleRow[]): Map<string, string[]> {
  const expected = new Map<string, string[]>();
  const npcByRelation = new Set(relations.filter((r) => r.predicate === 'killer' && String(r.objectEntityId).startsWith('enemy:')).map((r) => r.subjectEntityId));
  const tribes = tribesOf(relations);
  for (const row of killmails) {
    const victim = obj(row.victim);
    const killer = obj(row.killer);
    const labels: string[] = [];
    if (text(row.killerTypeId) || text(killer?.typeId) || killer?.isNpc === true || npcByRelation.has(row.id)) labels.push('npc');
    if (text(row.lossType) && String(row.lossType).toLowerCase() !== 'ship') labels.push('structure');
    const { victimId, killerCharacters: killers } = actorsOf(row);
    const victimTribes = victimId ? (tribes.get(victimId) ?? new Set()) : new Set();
    if (killers.some((id) => [...(tribes.get(id) ?? [])].some((t) => victimTribes.has(t)))) labels.push('same_tribe');
    const resolved = (value: BundleRow | undefined, ids: unknown[]) => value?.entityType !== 'unknown' && [...ids, value?.entityId, value?.rawId].some((id) => text(id) !== undefined);
    if (!resolved(victim, [row.victimCharacterId]) || !resolved(killer, [row.killerCharacterId, row.killerTypeId, killer?.typeId])) labels.push('unresolved');
    expected.set(row.id, labels);
  }
  return expected;
}

/** The UTC hour of the week a killmail occurred in, Monday 00:00 = 0 (computed here, not by the gateway's weekHourOf). */
export function weekHour(instant: string): number {
  const at = new Date(Date.parse(instant.replace(/(\.\d{3})\d+/, '$1')));
  return ((at.getUTCDay() + 6) % 7) * 24 + at.getUTCHours();
}

/** Killmails by weekday and hour, UTC, Monday first: `[7][24]`. */
export function gridOf(rows: readonly BundleRow[]): number[][] {
  const grid = Array.from({ length: 7 }, () => new Array<number>(24).fill(0));
  for (const row of rows) {
    const h = weekHour(String(row.occurredAt));
    const day = grid[Math.floor(h / 24)]!;
    day[h % 24] = (day[h % 24] ?? 0) + 1;
  }
  return grid;
}
