/**
 * Killmail labels and proof, derived once when a generation is loaded and kept with
 * the killmail's list view, so that `label=` filters lists, streams and downloads:
 *
 * - `npc`: the killer is an NPC (a killer type id, `isNpc`, or a sourced `killer` relation to an
 *   enemy: the `npc` field).
 * - `structure`: the loss is not a ship (`lossType` other than `Ship`).
 * - `same_tribe`: the victim and a killer character belong to one tribe (`belongs_to` relations
 *   of the generation).
 * - `unresolved`: the export could not resolve the victim or the killer (no id, or
 *   `entityType: "unknown"`).
 *
 * The proof is the killmail's chain event (`raw.sourceEventId`) and its transaction digest,
 * read from the event id (`event:<txDigest>:<seq>`), when the export has one.
 */
import { type Row, object, str } from './description.ts';

export const KILLMAIL_LABELS = ['npc', 'structure', 'same_tribe', 'unresolved'] as const;
export type KillmailLabel = (typeof KILLMAIL_LABELS)[number];

export interface KillmailProof {
  eventId: string;
  href: string;
  transactionDigest?: string;
}

/** Whether the export resolved this actor: an id of some kind, and not `entityType: "unknown"`. */
function resolved(row: Row, key: 'victim' | 'killer'): boolean {
  const value = object(row[key]);
  if (value?.entityType === 'unknown') return false;
  const ids = key === 'victim' ? [row.victimCharacterId] : [row.killerCharacterId, row.killerTypeId, value?.typeId];
  return [...ids, value?.entityId, value?.rawId].some((id) => str(id) !== undefined);
}

/** The labels of one exported killmail row, given its NPC proof and the tribes of its victim and killer characters. */
export function labelsOf(row: Row, facts: { npc: boolean; victimTribeIds: readonly string[]; killerTribeIds: readonly string[] }): KillmailLabel[] {
  const labels: KillmailLabel[] = [];
  if (facts.npc) labels.push('npc');
  const loss = str(row.lossType);
  if (loss !== undefined && loss.toLowerCase() !== 'ship') labels.push('structure');
  if (facts.killerTribeIds.some((tribe) => facts.victimTribeIds.includes(tribe))) labels.push('same_tribe');
  if (!resolved(row, 'victim') || !resolved(row, 'killer')) labels.push('unresolved');
  return labels;
}

/** The killmail's chain event and its transaction digest, when the export names the event. */
export function proofOf(row: Row): KillmailProof | undefined {
  const eventId = str(object(row.raw)?.sourceEventId);
  if (!eventId) return undefined;
  const digest = /^event:([^:]+):\d+$/.exec(eventId)?.[1];
  return { eventId, href: `/v1/events/${encodeURIComponent(eventId)}`, ...(digest && digest !== 'unknown' ? { transactionDigest: digest } : {}) };
}
