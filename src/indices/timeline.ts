/**
 * Time-ordered indices: events, killmails and chain objects. Lists read them newest first
 * (instant, then id, both descending); events and killmails are index-sorted that way.
 *
 * Cycles: killmails carry none and always get the cycle of `occurredAt`; events keep a
 * declared cycle, else get the cycle of `occurredAt`; chain objects get that of `observedAt`.
 *
 * Killmail actors are resolved once, at load time, from the generation's own entities: `row`
 * holds the list view (actors and names filled, the bulky `raw` payload left out), so a list
 * page is one search; the exported line is kept beside it as the stored field `original` for
 * the detail and `/raw` routes.
 */
import chainObjectsMapping from '../../mappings/chain_objects.json' with { type: 'json' };
import eventsMapping from '../../mappings/events.json' with { type: 'json' };
import killmailsMapping from '../../mappings/killmails.json' with { type: 'json' };
import { cycleAt, declaredCycle } from './cycle.ts';
import { type IndexDescription, type MappingFile, type Row, RowError, required, str, tokensOf } from './description.ts';
import { toInstant } from '../time/instant.ts';
import { actorEntityIds, listView } from './killmail-actors.ts';
import { type KillmailLabel, labelsOf, proofOf } from './killmail-labels.ts';

function occurred(row: Row, field: string) {
  const instant = toInstant(required(row, field));
  if (instant === undefined) throw new RowError(`"${field}" is not an RFC 3339 timestamp`);
  return instant;
}

export interface EventDoc {
  id: string;
  kind: string;
  module?: string;
  packageId?: string;
  transactionDigest?: string;
  sourceId?: string;
  environment: string;
  cycle: number;
  occurredAt: string;
  /** Words of the id, kind, module, digest, package and source: the `q` filter. */
  tokens: string[];
  row: Row;
}

export const events: IndexDescription<EventDoc> = {
  name: 'events',
  files: ['events'],
  mapping: eventsMapping as MappingFile,
  requiredFields: ['id', 'kind', 'environment', 'occurredAt'],
  firstSeen: true,
  tombstones: true,
  sort: [
    { field: 'occurredAt', order: 'desc' },
    { field: 'id', order: 'desc' },
  ],
  toDocument(row, context) {
    const at = occurred(row, 'occurredAt');
    return {
      id: required(row, 'id'),
      kind: required(row, 'kind'),
      tokens: tokensOf(row.id, row.kind, row.module, row.transactionDigest, row.packageId, row.sourceId),
      module: str(row.module),
      packageId: str(row.packageId),
      transactionDigest: str(row.transactionDigest),
      sourceId: str(row.sourceId),
      environment: required(row, 'environment'),
      cycle: declaredCycle(row.cycle) || cycleAt(at.ms, context.cycleStarts),
      occurredAt: at.text,
      row,
    };
  },
};

/** Monday 00:00 UTC = 0 … Sunday 23:00 = 167. */
export function weekHourOf(ms: number): number {
  const at = new Date(ms);
  return ((at.getUTCDay() + 6) % 7) * 24 + at.getUTCHours();
}

export interface KillmailDoc {
  id: string;
  environment: string;
  cycle: number;
  occurredAt: string;
  systemId?: string;
  victimId?: string;
  /** Killer character id, explicit killer type id and resolved killer entity id: `killer=` matches any. */
  killerIds: string[];
  /** The one killer of the kill (`group_by=killer`): its entity id when resolved, else its character id, else its type id. */
  killerId?: string;
  reporterId?: string;
  /** Killer proven NPC: an explicit killer type id, or a sourced enemy killer relation. */
  npc: boolean;
  /** `npc`, `structure`, `same_tribe`, `unresolved` (killmail-labels.ts): set by `prepare`, kept in the list view too. */
  labels: KillmailLabel[];
  /** The victim's tribes and the killer characters' tribes (`belongs_to`), set by `prepare`: a tribe's activity. */
  victimTribeIds: string[];
  killerTribeIds: string[];
  lossType?: string;
  /** The UTC hour of the week it occurred in, Monday 00:00 = 0 … Sunday 23:00 = 167: an activity's 7 × 24 grid (no scripts on this Elasticsearch). */
  weekHour: number;
  /** Words of the id, the actors' ids and names, and the loss type: the `q` filter. */
  tokens: string[];
  /** The exported row while building; the list view once `prepare` ran. */
  row: Row;
}

type Resolved = { entityId?: unknown; rawId?: unknown; entityType?: unknown; typeId?: unknown; isNpc?: unknown; displayName?: unknown };

function resolved(value: unknown): Resolved {
  return value !== null && typeof value === 'object' ? (value as Resolved) : {};
}

export const killmails: IndexDescription<KillmailDoc> = {
  name: 'killmails',
  files: ['killmails'],
  mapping: killmailsMapping as MappingFile,
  requiredFields: ['id', 'environment', 'occurredAt', 'sourceIds'],
  keepsLine: true,
  firstSeen: true,
  tombstones: true,
  // Actor names come from the entities, NPC proofs from the relations (a sourced `killer` relation to an enemy).
  dependsOn: ['entities', 'relations'],
  async prepare(docs, context) {
    const characters = docs.flatMap((d) => [d.victimId, ...d.killerIds].filter((id): id is string => id?.startsWith('character:') === true));
    const [entities, npcKills, tribes] = await Promise.all([
      context.lookupEntities(actorEntityIds(docs.map((d) => d.row))),
      context.lookupNpcKills(docs.filter((d) => !d.npc).map((d) => d.id)),
      context.lookupTribes([...new Set(characters)]),
    ]);
    for (const doc of docs) {
      if (npcKills.has(doc.id)) doc.npc = true;
      doc.victimTribeIds = doc.victimId ? [...(tribes.get(doc.victimId) ?? [])] : [];
      doc.killerTribeIds = [...new Set(doc.killerIds.filter((id) => id !== doc.victimId).flatMap((id) => tribes.get(id) ?? []))];
      // From the row as exported: the list view leaves out `raw`, where the proof is.
      doc.labels = labelsOf(doc.row, doc);
      const proof = proofOf(doc.row);
      doc.row = { ...listView(doc.row, entities), labels: doc.labels, ...(proof && { proof }) };
    }
  },
  sort: [
    { field: 'occurredAt', order: 'desc' },
    { field: 'id', order: 'desc' },
  ],
  toDocument(row, context) {
    const id = required(row, 'id');
    const at = occurred(row, 'occurredAt');
    const killer = resolved(row.killer);
    const actor = (flat: unknown, value: unknown) => str(flat) ?? str(resolved(value).entityId) ?? str(resolved(value).rawId);
    // A raw chain `killer_id` is a character, never a type id: only explicit type ids count.
    const killerTypeId = str(row.killerTypeId) ?? str(killer.typeId);
    const killerCharacterId =
      str(row.killerCharacterId) ?? (killer.entityType === 'character' ? str(killer.entityId) ?? str(killer.rawId) : undefined);
    const killerIds = [killerCharacterId, killerTypeId, str(killer.entityId)].filter((v): v is string => v !== undefined);
    const systemId = actor(row.systemId, row.system);
    const victimId = actor(row.victimCharacterId, row.victim);
    const reporterId = actor(row.reporterCharacterId, row.reporter);
    return {
      id,
      environment: required(row, 'environment'),
      cycle: cycleAt(at.ms, context.cycleStarts),
      occurredAt: at.text,
      systemId,
      victimId,
      killerIds: [...new Set(killerIds)],
      killerId: str(killer.entityId) ?? killerCharacterId ?? killerTypeId,
      reporterId,
      // Completed by `prepare` with the relations' proof.
      npc: killerTypeId !== undefined || killer.isNpc === true,
      labels: [],
      victimTribeIds: [],
      killerTribeIds: [],
      lossType: str(row.lossType),
      weekHour: weekHourOf(at.ms),
      tokens: tokensOf(
        id,
        row.lossType,
        ...(['system', 'victim', 'killer', 'reporter'] as const).flatMap((actor) => [row[`${actor}Name`], resolved(row[actor]).displayName]),
        ...killerIds,
        systemId,
        victimId,
        reporterId,
      ),
      row,
    };
  },
};

export interface ChainObjectDoc {
  id: string;
  objectId: string;
  typeName?: string;
  module?: string;
  packageId?: string;
  sourceId?: string;
  environment: string;
  cycle: number;
  observedAt: string;
  row: Row;
}

export const chainObjects: IndexDescription<ChainObjectDoc> = {
  name: 'chain_objects',
  files: ['chain_objects', 'sui_objects'],
  mapping: chainObjectsMapping as MappingFile,
  requiredFields: ['id', 'objectId', 'environment', 'typeRepr', 'observedAt'],
  sort: [
    { field: 'observedAt', order: 'desc' },
    { field: 'id', order: 'desc' },
  ],
  toDocument(row, context) {
    const at = occurred(row, 'observedAt');
    return {
      id: required(row, 'id'),
      objectId: required(row, 'objectId'),
      typeName: str(row.typeName),
      module: str(row.module),
      packageId: str(row.packageId),
      sourceId: str(row.sourceId),
      environment: required(row, 'environment'),
      cycle: cycleAt(at.ms, context.cycleStarts),
      observedAt: at.text,
      row,
    };
  },
};
