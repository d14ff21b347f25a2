/**
 * Relations of the entity graph, recomputed per entity: the rows relations.jsonl writes when it
 * meets that entity, in file order. Each relation is written once, at the entity that owns it
 * (usually its subject; `traversed` is written at the route although a character is its subject).
 *
 * Endpoints outside the bundle are deliberate: owner caps and location hashes
 * (`unknown:<tenant>:ownercap-0x…`), tribes of environments without tribes, the character of a
 * misleading raw `killer_id`, gates of routes without gates. `objectIndex`/`subjectIndex` is -1
 * for those.
 *
 * Duplicate keys (last row wins): for killmails whose type index k has k % 500 === 2, the first
 * relation is written twice, the second copy with confidence `probable` instead of the first's.
 */
import type { Context } from './context.ts';
import { ofTypeInEnv } from './entity-table.ts';
import { entitySpec, routeEnds, type EntitySpec } from './entities.ts';
import { killmailSpec } from './killmails.ts';
import { createRandom, type Random } from './random.ts';
import { SOURCE, universeSource } from './sources.ts';

export interface RelationSpec {
  subject: string;
  subjectIndex: number;
  predicate: string;
  object: string;
  objectIndex: number;
  sourceId: string;
  confidence: string;
  environment: string;
}

/** True for killmails that get a duplicated relation row. */
export function hasDuplicateRelation(spec: EntitySpec): boolean {
  return spec.type === 'killmail' && spec.typeIndex % 500 === 2;
}

/** relations.jsonl row, fields in struct order (no id, no cycle, no time). */
export function relationRow(relation: RelationSpec): Record<string, unknown> {
  return {
    subjectEntityId: relation.subject,
    predicate: relation.predicate,
    objectEntityId: relation.object,
    sourceId: relation.sourceId,
    confidence: relation.confidence,
    environment: relation.environment,
  };
}

/** The relation id the API synthesises: `relation:<subject>:<predicate>:<object>:<sourceId>`. */
export function relationId(relation: RelationSpec): string {
  return `relation:${relation.subject}:${relation.predicate}:${relation.object}:${relation.sourceId}`;
}

function pickIn(list: Int32Array, random: Random, exclude = -1): number {
  if (list.length === 0) return -1;
  const pick = list[random.int(list.length)]!;
  if (pick !== exclude) return pick;
  return list.length > 1 ? list[(list.indexOf(pick) + 1) % list.length]! : -1;
}

function noisy(random: Random, confidence: string): string {
  return random.chance(0.05) ? random.pick(['stale', 'reported', 'unknown']) : confidence;
}

/** Relations written at entity `spec`, in file order (duplicates included). */
export function relationsAt(ctx: Context, spec: EntitySpec): RelationSpec[] {
  const random = createRandom(ctx.seed, 'relations', spec.index);
  const out: RelationSpec[] = [];
  const env = spec.environment;
  const add = (predicate: string, target: number | string, sourceId: string, confidence: string, subject?: number) => {
    const objectIndex = typeof target === 'number' ? target : -1;
    const subjectIndex = subject ?? spec.index;
    out.push({
      subject: subjectIndex === spec.index ? spec.id : entitySpec(ctx, subjectIndex).id,
      subjectIndex,
      predicate,
      object: typeof target === 'number' ? entitySpec(ctx, target).id : target,
      objectIndex,
      sourceId,
      confidence: noisy(random, confidence),
      environment: env,
    });
  };
  const inEnv = (type: Parameters<typeof ofTypeInEnv>[1]) => ofTypeInEnv(ctx.table, type, env);

  switch (spec.type) {
    case 'character': {
      if (random.chance(0.9)) {
        const tribes = inEnv('tribe');
        const tribe = env === 'stillness' && random.chance(0.15) ? tribes[0]! : pickIn(tribes, random);
        add('belongs_to', tribe >= 0 ? tribe : `tribe:${spec.tenant}:${98999000 + (spec.typeIndex % 997)}`, SOURCE.chain, 'verified');
      }
      if (random.chance(0.04)) {
        const other = pickIn(inEnv('tribe'), random);
        if (other >= 0) add('belongs_to', other, SOURCE.community, 'reported');
      }
      break;
    }
    case 'killmail': {
      const km = killmailSpec(ctx, spec.typeIndex);
      const source = km.hasRaw ? SOURCE.chain : SOURCE.datahub;
      if (km.victim >= 0) add('victim', km.victim, source, 'verified');
      if (km.killerMode === 'player') add('killer', km.killer, source, 'verified');
      if (km.killerMode === 'npc-type' && km.killer >= 0) add('killer', km.killer, SOURCE.enemies, 'probable');
      if (km.killerMode === 'npc-relation') add('killer', km.killer, SOURCE.manual, 'probable');
      if (km.killerMode === 'raw-killer-id') add('killer', `character:${spec.tenant}:${km.killerTypeNumber}`, source, 'reported');
      if (km.reporter >= 0) add('reported_by', km.reporter, source, 'verified');
      if (km.system >= 0) add('occurred_in', km.system, source, 'verified');
      if (hasDuplicateRelation(spec) && out.length > 0) {
        const first = out[0]!;
        out.push({ ...first, confidence: first.confidence === 'probable' ? 'verified' : 'probable' });
      }
      break;
    }
    case 'assembly':
    case 'storage':
    case 'turret':
    case 'gate': {
      const system = random.chance(0.9) ? pickIn(inEnv('system'), random) : -1;
      if (system >= 0) add('located_in', system, random.chance(0.05) ? SOURCE.reverse : SOURCE.chain, 'verified');
      const owner = random.chance(0.85) ? pickIn(inEnv('character'), random) : -1;
      if (owner >= 0) add('owned_by', owner, SOURCE.chain, 'verified');
      add('has_owner_cap', `unknown:${spec.tenant}:ownercap-0x${random.hex(8)}`, SOURCE.chainObjects, 'verified');
      if (random.chance(0.7)) add('has_location_hash', `unknown:${spec.tenant}:location-${random.hex(12)}`, SOURCE.chainObjects, 'probable');
      if (spec.type === 'gate' && random.chance(0.7)) {
        const other = pickIn(inEnv('gate'), random, spec.index);
        if (other >= 0) add('links_to', other, SOURCE.chain, 'verified');
      }
      break;
    }
    case 'route': {
      const ends = routeEnds(ctx, spec.index);
      add('observed_between', ends.from >= 0 ? ends.from : `gate:${spec.tenant}:${ends.fromToken}`, SOURCE.chain, 'verified');
      add('observed_between', ends.to >= 0 ? ends.to : `gate:${spec.tenant}:${ends.toToken}`, SOURCE.chain, 'verified');
      const traveller = pickIn(inEnv('character'), random);
      if (traveller >= 0) add('traversed', spec.index, SOURCE.observed, 'reported', traveller);
      break;
    }
    case 'system': {
      const constellation = pickIn(inEnv('constellation'), random);
      if (constellation >= 0) add('located_in', constellation, universeSource(env), 'verified');
      break;
    }
    case 'constellation': {
      const region = pickIn(inEnv('region'), random);
      if (region >= 0) add('located_in', region, universeSource(env), 'verified');
      break;
    }
    case 'resource_object':
    case 'site': {
      const system = pickIn(inEnv('system'), random);
      if (system >= 0) add('located_in', system, SOURCE.observed, 'probable');
      break;
    }
    case 'enemy': {
      const system = random.chance(0.3) ? pickIn(inEnv('system'), random) : -1;
      if (system >= 0) add('observed_in', system, SOURCE.observed, 'reported');
      break;
    }
    case 'market': {
      const system = pickIn(inEnv('system'), random);
      if (system >= 0) add('located_at', system, SOURCE.manual, 'probable');
      break;
    }
    default:
      break;
  }
  return out;
}
