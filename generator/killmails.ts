/**
 * Killmails: one per killmail entity, recomputed from the seed and the killmail's type index,
 * so killmails.jsonl, the killmail entity's facts and relations, and its `killmail.created`
 * event all agree.
 *
 * Killer modes (api-behaviour.md 5.1):
 * - `npc-type` (~25%): flat `killerTypeId`; killer resolves to `enemy:<tenant>:type:<id>`, `isNpc: true`.
 * - `npc-relation` (~5%): no `killerTypeId`; NPC only through a sourced `killer` relation from the
 *   killmail entity to an enemy entity (relations.jsonl); killer resolved to that enemy.
 * - `raw-killer-id` (~3%): the raw payload's `killer_id.item_id` is the number of an enemy type,
 *   but it is a character id (`character:<tenant>:<number>`, outside the bundle): NOT an NPC.
 * - `player`: `killerCharacterId`, raw `killer_id` = the character's item id.
 * - `unresolved`: no killer id at all; `entityType: "unknown"`, `displayName: "Unknown"`.
 * About 10% of killmails have one unresolved actor (victim, killer or system), ~10% no reporter.
 */
import type { Context } from './context.ts';
import { envOf, ofType, ofTypeInEnv } from './entity-table.ts';
import { entitySpec, labelOf, type EntitySpec } from './entities.ts';
import { sortKeys } from './go-json.ts';
import { createRandom } from './random.ts';
import { SOURCE, universeSource } from './sources.ts';
import { formatTime, NANOS_PER_MS } from './time.ts';

export type KillerMode = 'npc-type' | 'npc-relation' | 'raw-killer-id' | 'player' | 'unresolved';

export interface KillmailSpec {
  /** Type index among killmails (file order before tie sorting). */
  k: number;
  entity: EntitySpec;
  itemId: string;
  ns: bigint;
  occurredAt: string;
  /** Chain-derived (raw payload, killmail.created event) or a datahub row without raw. */
  hasRaw: boolean;
  /** Global index of the system, or -1 when unresolved. */
  system: number;
  victim: number;
  killer: number;
  killerMode: KillerMode;
  /** Static type id of an NPC killer (npc-type, npc-relation) or the misleading raw number. */
  killerTypeNumber?: string;
  reporter: number;
  /** Which actor could not be resolved, if any. */
  unresolved?: 'victim' | 'killer' | 'system';
  eventId: string;
  digest: string;
  lossType: string;
  /** Whether flat `*Name` columns are present (the worker fills them when missing). */
  withNames: boolean;
}

function pickIn(list: Int32Array, roll: number): number {
  return list.length === 0 ? -1 : list[Math.floor(roll * list.length)]!;
}

/** Whether killmail `k` is chain-derived (raw payload + event); every 20th from 7 is a datahub row. */
export function killmailHasRaw(k: number): boolean {
  return k % 20 !== 7;
}

/** Killmail `k` (type index). */
export function killmailSpec(ctx: Context, k: number): KillmailSpec {
  const { table } = ctx;
  const index = ofType(table, 'killmail')[k]!;
  const entity = entitySpec(ctx, index);
  const environment = envOf(table, index);
  const random = createRandom(ctx.seed, 'killmail', k);
  const characters = ofTypeInEnv(table, 'character', environment);
  const hasRaw = killmailHasRaw(k);
  const ms = table.killmailNs[k]! / NANOS_PER_MS;
  const ns = hasRaw ? ms * NANOS_PER_MS : table.killmailNs[k]!;
  const roll = random.next();
  let killerMode: KillerMode = roll < 0.25 ? 'npc-type' : roll < 0.3 ? 'npc-relation' : roll < 0.33 ? 'raw-killer-id' : 'player';
  // The showcase block always has one of each mode.
  if (k < 4) killerMode = (['npc-type', 'npc-relation', 'raw-killer-id', 'player'] as const)[k]!;
  const unresolvedRoll = random.next();
  let unresolved: KillmailSpec['unresolved'] = unresolvedRoll < 0.04 ? 'victim' : unresolvedRoll < 0.07 ? 'killer' : unresolvedRoll < 0.1 ? 'system' : undefined;
  if (k === 4) unresolved = 'victim';
  if (k === 5) unresolved = 'killer';
  if (k === 6) unresolved = 'system';
  if (unresolved === 'killer') killerMode = 'unresolved';
  const enemies = ofTypeInEnv(table, 'enemy', environment);
  let killer = -1;
  let killerTypeNumber: string | undefined;
  if (killerMode === 'npc-type' || killerMode === 'npc-relation' || killerMode === 'raw-killer-id') {
    killer = pickIn(enemies, random.next());
    killerTypeNumber = killer >= 0 ? entitySpec(ctx, killer).token.replace('type:', '') : String(94390 + (k % 10));
    if (killerMode === 'raw-killer-id') killer = -1;
    if (killerMode === 'npc-relation' && killer < 0) killerMode = 'npc-type';
  } else if (killerMode === 'player') {
    killer = pickIn(characters, random.next());
    if (killer < 0) killerMode = 'unresolved';
  }
  if (killerMode === 'unresolved') unresolved ??= 'killer';
  const victim = unresolved === 'victim' ? -1 : pickIn(characters, random.next());
  if (victim < 0 && unresolved === undefined) unresolved = 'victim';
  let system = unresolved === 'system' ? -1 : pickIn(ofTypeInEnv(table, 'system', environment), random.next());
  // A killmail of a fight is in the system of the one it follows, when that one's is known and of its environment.
  if (system >= 0 && table.killmailInFight[k] === 1 && envOf(table, ofType(table, 'killmail')[k - 1]!) === environment) {
    const before = killmailSpec(ctx, k - 1).system;
    if (before >= 0) system = before;
  }
  if (system < 0 && unresolved === undefined) unresolved = 'system';
  const reporter = random.chance(0.1) ? -1 : pickIn(characters, random.next());
  const digest = createRandom(ctx.seed, 'killmail-digest', k).base58(44);
  const sequence = k % 2;
  return {
    k, entity, itemId: entity.token, ns,
    occurredAt: formatTime(ns, table.killmailOffset[k]!),
    hasRaw, system, victim, killer, killerMode, killerTypeNumber, reporter, unresolved,
    eventId: `event:${digest}:${sequence}`, digest,
    lossType: random.chance(0.85) ? 'Ship' : 'Structure',
    withNames: random.chance(0.5),
  };
}

/** Raw id of the victim that could not be resolved (a character outside the bundle). */
function missingVictimId(spec: KillmailSpec): string {
  return `character:${spec.entity.tenant}:${2199000000 + spec.k}`;
}

function missingSystemId(spec: KillmailSpec): string {
  return `system:${spec.entity.tenant}:${39000000 + spec.k}`;
}

function itemKey(id: string): { item_id: string; tenant: string } {
  const [, tenant, ...rest] = id.split(':');
  return { item_id: rest.join(':'), tenant: tenant! };
}

/** The on-chain event payload (`raw.event.json`, also the event's `payload.json`). */
export function killmailChainJson(ctx: Context, spec: KillmailSpec): Record<string, unknown> {
  const json: Record<string, unknown> = {
    key: { item_id: spec.itemId, tenant: spec.entity.tenant },
    kill_timestamp: Number(spec.ns / NANOS_PER_MS),
    loss_type: { '@variant': spec.lossType },
  };
  json.solar_system_id = itemKey(spec.system >= 0 ? entitySpec(ctx, spec.system).id : missingSystemId(spec));
  json.victim_id = itemKey(spec.victim >= 0 ? entitySpec(ctx, spec.victim).id : missingVictimId(spec));
  if (spec.killerMode === 'player') json.killer_id = itemKey(entitySpec(ctx, spec.killer).id);
  if (spec.killerMode === 'raw-killer-id') json.killer_id = { item_id: spec.killerTypeNumber, tenant: spec.entity.tenant };
  if (spec.killerMode === 'npc-type' && spec.k % 2 === 0) json.killer_type_id = spec.killerTypeNumber;
  if (spec.reporter >= 0) json.reported_by_character_id = itemKey(entitySpec(ctx, spec.reporter).id);
  return sortKeys(json);
}

const UNKNOWN_ACTOR = { entityType: 'unknown', displayName: 'Unknown', confidence: 'unknown' };

/** A resolved value, fields in struct order. */
function resolved(fields: {
  entityId?: string; entityType: string; rawId?: string; displayName: string; typeId?: string; isNpc?: boolean;
  confidence: string; sourceIds?: string[]; warnings?: string[];
}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (fields.entityId !== undefined) out.entityId = fields.entityId;
  out.entityType = fields.entityType;
  if (fields.rawId !== undefined) out.rawId = fields.rawId;
  out.displayName = fields.displayName;
  if (fields.typeId !== undefined) out.typeId = fields.typeId;
  if (fields.isNpc) out.isNpc = true;
  out.confidence = fields.confidence;
  if (fields.sourceIds !== undefined) out.sourceIds = fields.sourceIds;
  if (fields.warnings !== undefined) out.warnings = fields.warnings;
  return out;
}

function characterValue(ctx: Context, index: number, sourceIds?: string[]): Record<string, unknown> {
  const spec = entitySpec(ctx, index);
  return resolved({ entityId: spec.id, entityType: 'character', displayName: labelOf(spec), confidence: 'verified', sourceIds });
}

/** The killer's resolved value. */
export function killerValue(ctx: Context, spec: KillmailSpec): Record<string, unknown> {
  const tenant = spec.entity.tenant;
  switch (spec.killerMode) {
    case 'npc-type':
    case 'npc-relation': {
      if (spec.killer < 0) {
        return resolved({
          entityType: 'enemy', rawId: `enemy:${tenant}:type:${spec.killerTypeNumber}`, displayName: 'Unknown',
          typeId: spec.killerTypeNumber, isNpc: true, confidence: 'unknown', warnings: ['killer type could not be resolved'],
        });
      }
      const enemy = entitySpec(ctx, spec.killer);
      return resolved({
        entityId: enemy.id, entityType: 'enemy', displayName: labelOf(enemy), typeId: spec.killerTypeNumber, isNpc: true,
        confidence: 'probable', sourceIds: [spec.killerMode === 'npc-type' ? SOURCE.enemies : SOURCE.manual],
      });
    }
    case 'raw-killer-id': {
      const id = `character:${tenant}:${spec.killerTypeNumber}`;
      return resolved({
        entityId: id, entityType: 'character', rawId: id, displayName: `Character ${spec.killerTypeNumber}`, confidence: 'reported',
        warnings: ['raw killer_id is a character id; use killer_type_id or a sourced killer relation for NPC killers'],
      });
    }
    case 'player':
      return characterValue(ctx, spec.killer, spec.k % 3 === 0 ? [SOURCE.chain] : undefined);
    case 'unresolved':
      return resolved({ ...UNKNOWN_ACTOR, warnings: ['killer could not be resolved'] });
  }
}

/** The killmails.jsonl row: flat raw columns, then the semantic columns. */
export function killmailRow(ctx: Context, spec: KillmailSpec): Record<string, unknown> {
  const tenant = spec.entity.tenant;
  const row: Record<string, unknown> = { id: spec.entity.id, environment: spec.entity.environment, occurredAt: spec.occurredAt };
  const systemSpec = spec.system >= 0 ? entitySpec(ctx, spec.system) : undefined;
  const victimSpec = spec.victim >= 0 ? entitySpec(ctx, spec.victim) : undefined;
  const reporterSpec = spec.reporter >= 0 ? entitySpec(ctx, spec.reporter) : undefined;
  const killer = killerValue(ctx, spec);
  // Unresolved raw ids still reach the flat columns of half the rows (filled from the payload).
  if (systemSpec) row.systemId = systemSpec.id;
  else if (spec.hasRaw && spec.k % 2 === 0) row.systemId = missingSystemId(spec);
  if (systemSpec && spec.withNames) row.systemName = labelOf(systemSpec);
  if (victimSpec) row.victimCharacterId = victimSpec.id;
  else if (spec.hasRaw && spec.k % 2 === 0) row.victimCharacterId = missingVictimId(spec);
  if (victimSpec && spec.withNames) row.victimName = labelOf(victimSpec);
  if (spec.killerMode === 'player' || spec.killerMode === 'raw-killer-id') row.killerCharacterId = killer.entityId;
  if (spec.withNames && spec.killerMode !== 'unresolved') row.killerName = killer.displayName;
  if (spec.killerMode === 'npc-type') row.killerTypeId = spec.killerTypeNumber;
  if (reporterSpec) row.reporterCharacterId = reporterSpec.id;
  if (reporterSpec && spec.withNames) row.reporterName = labelOf(reporterSpec);
  row.lossType = spec.lossType;
  row.sourceIds = spec.hasRaw ? [SOURCE.chain] : [SOURCE.datahub];
  if (spec.hasRaw) row.raw = sortKeys({ event: { json: killmailChainJson(ctx, spec), module: 'killmail' }, sourceEventId: spec.eventId });
  row.kind = 'killmail';
  row.system = systemSpec
    ? resolved({ entityId: systemSpec.id, entityType: 'system', displayName: labelOf(systemSpec), confidence: 'verified', sourceIds: [universeSource(systemSpec.environment)] })
    : resolved({ ...UNKNOWN_ACTOR, rawId: missingSystemId(spec), warnings: ['system could not be resolved'] });
  row.victim = victimSpec
    ? characterValue(ctx, spec.victim, [SOURCE.chain])
    : resolved({ ...UNKNOWN_ACTOR, rawId: missingVictimId(spec), warnings: ['victim could not be resolved'] });
  row.killer = killer;
  row.reporter = reporterSpec ? characterValue(ctx, spec.reporter) : resolved(UNKNOWN_ACTOR);
  if (spec.k % 10 !== 9) row.summaryText = `${killer.displayName as string} killed ${victimSpec ? labelOf(victimSpec) : 'Unknown'}`;
  if (spec.k % 4 !== 1) {
    const sources = [...(row.sourceIds as string[])];
    if (spec.killerMode === 'npc-type' && spec.killer >= 0) sources.push(SOURCE.enemies);
    if (spec.killerMode === 'npc-relation') sources.push(SOURCE.manual);
    row.sources = sources;
  }
  const warnings = [row.system, row.victim, row.killer]
    .flatMap((value) => ((value as { warnings?: string[] }).warnings ?? []));
  if (warnings.length > 0) row.warnings = warnings;
  if (spec.k === 1) row.futureField = { x: 1, tenant };
  return row;
}
