/**
 * The labels a computation over the bundle files gives each killmail (issue 48; the gateway's
 * rule is src/indices/killmail-labels.ts): from killmails.jsonl and the relations that prove NPC
 * kills (`killer` → an enemy) and tribes (`belongs_to` → a tribe).
 */
import type { BundleRow } from '../../generator/read-bundle.ts';

export const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);
export const obj = (v: unknown): BundleRow | undefined => (v !== null && typeof v === 'object' ? (v as BundleRow) : undefined);

/** Killmail id → its labels, in the order the API lists them. */
export function expectedLabels(killmails: readonly BundleRow[], relations: readonly BundleRow[]): Map<string, string[]> {
  const expected = new Map<string, string[]>();
  const npcByRelation = new Set(relations.filter((r) => r.predicate === 'killer' && String(r.objectEntityId).startsWith('enemy:')).map((r) => r.subjectEntityId));
  const tribes = new Map<string, Set<string>>();
  for (const r of relations) {
    if (r.predicate !== 'belongs_to' || !String(r.objectEntityId).startsWith('tribe:')) continue;
    tribes.set(r.subjectEntityId, (tribes.get(r.subjectEntityId) ?? new Set()).add(r.objectEntityId));
  }
  for (const row of killmails) {
    const victim = obj(row.victim);
    const killer = obj(row.killer);
    const labels: string[] = [];
    if (text(row.killerTypeId) || text(killer?.typeId) || killer?.isNpc === true || npcByRelation.has(row.id)) labels.push('npc');
    if (text(row.lossType) && String(row.lossType).toLowerCase() !== 'ship') labels.push('structure');
    const victimId = text(row.victimCharacterId) ?? text(victim?.entityId) ?? text(victim?.rawId);
    const killerCharacter = text(row.killerCharacterId) ?? (killer?.entityType === 'character' ? text(killer.entityId) ?? text(killer.rawId) : undefined);
    const killers = [killerCharacter, text(killer?.entityId)].filter((id): id is string => id?.startsWith('character:') === true && id !== victimId);
    const victimTribes = victimId ? (tribes.get(victimId) ?? new Set()) : new Set();
    if (killers.some((id) => [...(tribes.get(id) ?? [])].some((t) => victimTribes.has(t)))) labels.push('same_tribe');
    const resolved = (value: BundleRow | undefined, ids: unknown[]) => value?.entityType !== 'unknown' && [...ids, value?.entityId, value?.rawId].some((id) => text(id) !== undefined);
    if (!resolved(victim, [row.victimCharacterId]) || !resolved(killer, [row.killerCharacterId, row.killerTypeId, killer?.typeId])) labels.push('unresolved');
    expected.set(row.id, labels);
  }
  return expected;
}
