/**
 * The compact skeleton of every entity: type, environment, cycle, tenant, per-type index and
 * update time, in typed arrays (a few bytes per entity), plus the per-type times that several
 * files must agree on (character creation, killmail occurrence).
 *
 * Everything else about an entity (id, name, facts, relations) is recomputed on demand from the
 * seed and its index, so no file is ever built in memory. Entities come in blocks of 100 with a
 * fixed type mix, shuffled per block. Block 0 is a showcase: at least two of every type, and
 * environments forced so that each type exists in `stillness` and (when it has two or more
 * slots) in `utopia` even at scale 1.
 */
import { createRandom } from './random.ts';
import { DescendingClock } from './time.ts';
import { ENV_CODE, ENVIRONMENTS, ENTITY_TYPES, TYPE_CODE, type EntityType, type Environment } from './vocabulary.ts';

/** Entities per block; `scale` is the number of blocks. */
export const BLOCK_SIZE = 100;

/** The suggested mix of export-format.md section 9, per 100 entities. */
const NORMAL_MIX: readonly (readonly [EntityType, number])[] = [
  ['character', 26], ['system', 17], ['killmail', 15], ['assembly', 8], ['resource_object', 5], ['storage', 4],
  ['item', 3], ['route', 3], ['gate', 2], ['turret', 2], ['tribe', 2], ['constellation', 1], ['region', 1],
  ['material', 1], ['ship', 1], ['structure', 1], ['enemy', 1], ['blueprint', 1], ['recipe', 1], ['site', 1],
  ['unknown', 1], ['player', 1], ['alliance', 1], ['market', 1],
];

/** Block 0: every type at least twice where the API has a collection for it. */
const SHOWCASE_MIX: readonly (readonly [EntityType, number])[] = [
  ['character', 20], ['system', 12], ['killmail', 14], ['assembly', 6], ['resource_object', 4], ['storage', 4],
  ['item', 3], ['route', 3], ['gate', 4], ['turret', 3], ['tribe', 4], ['constellation', 3], ['region', 2],
  ['material', 2], ['ship', 2], ['structure', 2], ['enemy', 3], ['blueprint', 2], ['recipe', 2], ['site', 1],
  ['unknown', 1], ['player', 1], ['alliance', 1], ['market', 1],
];

const UNCYCLED = 0;

export interface EntityTable {
  readonly count: number;
  /** Code into ENTITY_TYPES. */
  readonly type: Uint8Array;
  /** Code into ENVIRONMENTS. */
  readonly env: Uint8Array;
  /** 5, 6, or 0 for uncycled. */
  readonly cycle: Uint8Array;
  /** 1 when the id's tenant is `liminality` instead of the environment. */
  readonly altTenant: Uint8Array;
  /** Position among entities of the same type. */
  readonly typeIndex: Uint32Array;
  /** Position among entities of the same type and environment. */
  readonly envRank: Uint32Array;
  /** `updatedAt`, non-increasing with the index. */
  readonly updatedNs: BigInt64Array;
  /** Offset in minutes used to write `updatedAt`. */
  readonly updatedOffset: Int16Array;
  /** Global indices per type code, by type index. */
  readonly byType: readonly Int32Array[];
  /** Global indices per type code and environment code, by environment rank. */
  readonly byTypeEnv: readonly (readonly Int32Array[])[];
  /** Creation instant of each character (by type index), non-increasing. */
  readonly characterCreatedNs: BigInt64Array;
  readonly characterCreatedOffset: Int16Array;
  /** Occurrence instant of each killmail (by type index), non-increasing; milliseconds. */
  readonly killmailNs: BigInt64Array;
  readonly killmailOffset: Int16Array;
  /** Killmails of a fight: 0 to 12 min before the one after them (by type index: the one before), in its system when both are of one environment. */
  readonly killmailInFight: Uint8Array;
}

/** Share of killmails that follow the next newer one into its fight: the registry's kills come in fights (battles). */
const FIGHT_SHARE = 0.35;

function expand(mix: readonly (readonly [EntityType, number])[]): EntityType[] {
  const pattern = mix.flatMap(([type, n]) => Array.from({ length: n }, () => type));
  if (pattern.length !== BLOCK_SIZE) throw new Error(`a type mix must fill ${BLOCK_SIZE} slots, not ${pattern.length}`);
  return pattern;
}

/** Builds the table for `scale` blocks. `newest` bounds every generated instant. */
export function buildEntityTable(seed: number, scale: number, newest: bigint): EntityTable {
  const count = scale * BLOCK_SIZE;
  const type = new Uint8Array(count);
  const env = new Uint8Array(count);
  const cycle = new Uint8Array(count);
  const altTenant = new Uint8Array(count);
  const typeIndex = new Uint32Array(count);
  const envRank = new Uint32Array(count);
  const counters = new Uint32Array(ENTITY_TYPES.length);

  for (let block = 0; block < scale; block += 1) {
    const pattern = createRandom(seed, 'block', block).shuffle(expand(block === 0 ? SHOWCASE_MIX : NORMAL_MIX));
    pattern.forEach((entityType, position) => {
      const i = block * BLOCK_SIZE + position;
      const code = TYPE_CODE[entityType];
      type[i] = code;
      typeIndex[i] = counters[code]!;
      counters[code]! += 1;
      const random = createRandom(seed, 'entity-skeleton', i);
      env[i] = ENV_CODE[random.weighted<Environment>([['stillness', 95], ['utopia', 4], ['unknown', 1]])];
      cycle[i] = random.weighted([[6, 60], [5, 30], [UNCYCLED, 10]]);
      altTenant[i] = block > 0 && env[i] === ENV_CODE.stillness && random.chance(0.004) ? 1 : 0;
    });
  }
  forceShowcaseEnvironments(type, env, altTenant, Math.min(count, BLOCK_SIZE));

  const byTypeLists: number[][] = ENTITY_TYPES.map(() => []);
  const byTypeEnvLists: number[][][] = ENTITY_TYPES.map(() => ENVIRONMENTS.map(() => []));
  for (let i = 0; i < count; i += 1) {
    byTypeLists[type[i]!]!.push(i);
    const list = byTypeEnvLists[type[i]!]![env[i]!]!;
    envRank[i] = list.length;
    list.push(i);
  }

  const updatedNs = new BigInt64Array(count);
  const updatedOffset = new Int16Array(count);
  const updateClock = new DescendingClock(createRandom(seed, 'entity-updated'), {
    count, shares: [50, 35, 15], newest: newest - 120n * 1_000_000_000n, milliseconds: false, tieRate: 0.03, offsetRate: 0.03,
  });
  for (let i = 0; i < count; i += 1) {
    const tick = updateClock.next();
    updatedNs[i] = tick.ns;
    updatedOffset[i] = tick.offsetMinutes;
  }

  const characters = counters[TYPE_CODE.character]!;
  const characterCreatedNs = new BigInt64Array(characters);
  const characterCreatedOffset = new Int16Array(characters);
  const createdClock = new DescendingClock(createRandom(seed, 'character-created'), {
    count: characters, shares: [50, 35, 15], newest: newest - 600n * 1_000_000_000n, milliseconds: true, tieRate: 0.02, offsetRate: 0.01,
  });
  for (let k = 0; k < characters; k += 1) {
    const tick = createdClock.next();
    characterCreatedNs[k] = tick.ns;
    characterCreatedOffset[k] = tick.offsetMinutes;
  }

  const killmails = counters[TYPE_CODE.killmail]!;
  const killmailNs = new BigInt64Array(killmails);
  const killmailOffset = new Int16Array(killmails);
  const killClock = new DescendingClock(createRandom(seed, 'killmail-occurred'), {
    count: killmails, shares: [45, 40, 15], newest: newest - 900n * 1_000_000_000n, milliseconds: true, tieRate: 0.06, offsetRate: 0.02,
  });
  const killmailInFight = new Uint8Array(killmails);
  const fights = createRandom(seed, 'killmail-fight');
  for (let k = 0; k < killmails; k += 1) {
    const tick = killClock.next();
    killmailNs[k] = tick.ns;
    killmailOffset[k] = tick.offsetMinutes;
    // Still non-increasing: a few minutes before the killmail before it, which is newer than this one's own tick.
    if (k > 0 && fights.chance(FIGHT_SHARE)) {
      killmailInFight[k] = 1;
      // One in eight at the very same instant: exact ties inside a battle.
      killmailNs[k] = killmailNs[k - 1]! - (fights.chance(0.125) ? 0n : BigInt(fights.between(20, 720) * 1000) * 1_000_000n);
    }
  }

  return {
    count, type, env, cycle, altTenant, typeIndex, envRank, updatedNs, updatedOffset,
    byType: byTypeLists.map((list) => Int32Array.from(list)),
    byTypeEnv: byTypeEnvLists.map((lists) => lists.map((list) => Int32Array.from(list))),
    characterCreatedNs, characterCreatedOffset, killmailNs, killmailOffset, killmailInFight,
  };
}

/**
 * Block 0: per type, the last slot goes to `utopia` (the last two for gates, so a utopia route
 * has two gates), the second-to-last character and killmail to `unknown`, everything else to
 * `stillness`; the first resource object gets the foreign tenant `liminality`.
 */
function forceShowcaseEnvironments(type: Uint8Array, env: Uint8Array, altTenant: Uint8Array, size: number): void {
  const slots = new Map<number, number[]>();
  for (let i = 0; i < size; i += 1) {
    const list = slots.get(type[i]!) ?? [];
    list.push(i);
    slots.set(type[i]!, list);
  }
  for (const [code, list] of slots) {
    for (const i of list) env[i] = ENV_CODE.stillness;
    const entityType = ENTITY_TYPES[code]!;
    if (list.length >= 2) env[list[list.length - 1]!] = ENV_CODE.utopia;
    if (entityType === 'gate' && list.length >= 3) env[list[list.length - 2]!] = ENV_CODE.utopia;
    if ((entityType === 'character' || entityType === 'killmail') && list.length >= 3) env[list[list.length - 2]!] = ENV_CODE.unknown;
    if (entityType === 'resource_object') altTenant[list[0]!] = 1;
  }
}

export function typeOf(table: EntityTable, i: number): EntityType {
  return ENTITY_TYPES[table.type[i]!]!;
}

export function envOf(table: EntityTable, i: number): Environment {
  return ENVIRONMENTS[table.env[i]!]!;
}

/** Global indices of the entities of a type in an environment. */
export function ofTypeInEnv(table: EntityTable, entityType: EntityType, environment: Environment): Int32Array {
  return table.byTypeEnv[TYPE_CODE[entityType]]![ENV_CODE[environment]]!;
}

/** Global indices of the entities of a type. */
export function ofType(table: EntityTable, entityType: EntityType): Int32Array {
  return table.byType[TYPE_CODE[entityType]]!;
}
