/**
 * events.jsonl: about 12 on-chain events per entity, newest first (`occurred_at DESC, id DESC`).
 *
 * Four producers, each already in time order, are merged: `character.created` (one per character,
 * the ids its evidence facts cite), `killmail.created` (one per chain-derived killmail, the event
 * its `raw.sourceEventId` names, same instant), deployable `*.created` events, and the bulk
 * streams (inventory, fuel, energy, status, gate jumps, rifts), grouped in transactions of 1–3
 * events that share digest and instant (ties, ordered by id descending). Chain times have
 * millisecond precision. `cycle` is present for most events of the cycle 6 window, some of the
 * cycle 5 window, never before. Events whose tenant differs from their environment are not
 * written (the writer's tenant filter). A few events lack `sourceId`, some have `checkpoint`, a
 * few have no digest (id `event:unknown:<24 hex>`), the newest bulk event has an unknown field.
 */
import { characterCreatedEvent, deployableCreatedEventId } from './chain-ids.ts';
import type { Context } from './context.ts';
import { ofType, ofTypeInEnv } from './entity-table.ts';
import { entitySpec } from './entities.ts';
import { sortKeys } from './go-json.ts';
import { killmailChainJson, killmailHasRaw, killmailSpec } from './killmails.ts';
import { mergeDescending, sortTies, type Timed } from './ordering.ts';
import { createRandom, type Random } from './random.ts';
import { relationsAt } from './relations.ts';
import { SOURCE } from './sources.ts';
import { cycleOf, DescendingClock, formatTime } from './time.ts';
import { DEPLOYABLE_TYPES, type EntityType, type Environment } from './vocabulary.ts';

type Row = Record<string, unknown>;

interface EventDraft {
  id: string;
  kind: string;
  environment: string;
  ns: bigint;
  occurredAt: string;
  module: string;
  moveName: string;
  digest: string | undefined;
  sequence: number;
  json: Record<string, unknown>;
  keyField?: string;
  packageId: string;
}

function moveType(packageId: string, module: string, name: string): string {
  return `${packageId}::${module}::${name}`;
}

/** Builds the row; `random` decides the optional parts (cycle, sender, checkpoint, ...). */
function eventRow(draft: EventDraft, random: Random): Row {
  const cycleWindow = cycleOf(draft.ns);
  const cycle = cycleWindow === 6 ? (random.chance(0.9) ? 6 : undefined) : cycleWindow === 5 ? (random.chance(0.4) ? 5 : undefined) : undefined;
  const bare = random.chance(0.01);
  const row: Row = { id: draft.id, kind: draft.kind, environment: draft.environment, occurredAt: draft.occurredAt };
  if (cycle !== undefined) row.cycle = cycle;
  if (!bare) row.packageId = draft.packageId;
  if (!bare) row.module = draft.module;
  if (draft.digest !== undefined) row.transactionDigest = draft.digest;
  if (random.chance(0.03)) row.checkpoint = String(180_000_000 + random.int(50_000_000));
  if (random.chance(0.95)) row.sourceId = SOURCE.chain;
  // A Go map: keys written in sorted order here (cheaper than sorting a million payloads); `json`
  // arrives sorted from its producer.
  const confidence = random.chance(0.95) ? 'verified' : 'probable';
  const reviewStatus = random.chance(0.85) ? 'candidate' : 'reviewed';
  const sender = random.chance(0.7) ? `0x${random.hex(64)}` : undefined;
  const timestamp = random.chance(0.6) ? draft.occurredAt : undefined;
  const payload: Row = { confidence, json: draft.json };
  if (draft.keyField === 'key' && draft.json.key !== undefined) payload.key = draft.json.key;
  payload.module = draft.module;
  payload.moveType = moveType(draft.packageId, draft.module, draft.moveName);
  payload.packageId = draft.packageId;
  payload.reviewStatus = reviewStatus;
  if (sender !== undefined) payload.sender = sender;
  payload.sequenceNumber = draft.sequence;
  payload.sourceKind = 'chain_event';
  if (timestamp !== undefined) payload.timestamp = timestamp;
  if (draft.digest !== undefined) payload.transactionDigest = draft.digest;
  row.payload = payload;
  return row;
}

function timed(draft: EventDraft, random: Random): Timed<Row> {
  return { ns: draft.ns, id: draft.id, row: eventRow(draft, random) };
}

function* characterEvents(ctx: Context): Generator<Timed<Row>> {
  const random = createRandom(ctx.seed, 'events-character');
  for (const index of ofType(ctx.table, 'character')) {
    const spec = entitySpec(ctx, index);
    const event = characterCreatedEvent(ctx, spec);
    if (!event) continue;
    const tribe = relationsAt(ctx, spec).find((relation) => relation.predicate === 'belongs_to');
    const json: Record<string, unknown> = {
      character_address: `0x${createRandom(ctx.seed, 'character-address', index).hex(64)}`,
      key: { item_id: spec.token, tenant: spec.tenant },
      metadata: { name: spec.name },
    };
    if (tribe) json.tribe_id = Number(tribe.object.slice(tribe.object.lastIndexOf(':') + 1));
    yield timed({
      id: event.id, kind: 'character.created', environment: spec.environment, ns: event.ns, occurredAt: event.occurredAt,
      module: 'character', moveName: 'CharacterCreatedEvent', digest: event.digest, sequence: 0,
      json: sortKeys(json), keyField: 'key', packageId: ctx.worldPackage,
    }, random);
  }
}

function* killmailEvents(ctx: Context): Generator<Timed<Row>> {
  const random = createRandom(ctx.seed, 'events-killmail');
  const count = ofType(ctx.table, 'killmail').length;
  for (let k = 0; k < count; k += 1) {
    const spec = killmailSpec(ctx, k);
    if (!spec.hasRaw || spec.entity.tenant !== spec.entity.environment) continue;
    yield timed({
      id: spec.eventId, kind: 'killmail.created', environment: spec.entity.environment, ns: spec.ns, occurredAt: spec.occurredAt,
      module: 'killmail', moveName: 'KillmailCreatedEvent', digest: spec.digest, sequence: spec.k % 2,
      json: killmailChainJson(ctx, spec), keyField: 'key', packageId: ctx.worldPackage,
    }, random);
  }
}

const CREATED: Record<(typeof DEPLOYABLE_TYPES)[number], readonly [string, string, string, string]> = {
  assembly: ['assembly.created', 'assembly', 'AssemblyCreatedEvent', 'assembly_key'],
  storage: ['storage_unit.created', 'storage_unit', 'StorageUnitCreatedEvent', 'storage_unit_key'],
  turret: ['turret.created', 'turret', 'TurretCreatedEvent', 'turret_key'],
  gate: ['gate.created', 'gate', 'GateCreatedEvent', 'gate_key'],
};

function* deployableEvents(ctx: Context): Generator<Timed<Row>> {
  const indices = DEPLOYABLE_TYPES.flatMap((type) => [...ofType(ctx.table, type)]).sort((a, b) => a - b);
  const exported = indices.filter((index) => ctx.table.altTenant[index] === 0);
  const random = createRandom(ctx.seed, 'events-deployable');
  const clock = new DescendingClock(createRandom(ctx.seed, 'events-deployable-clock'), {
    count: exported.length, shares: [30, 50, 20], newest: ctx.generatedNs - 60_000_000_000n, milliseconds: true, tieRate: 0.01, offsetRate: 0.005,
  });
  for (const index of exported) {
    const spec = entitySpec(ctx, index);
    const type = spec.type as (typeof DEPLOYABLE_TYPES)[number];
    const networkNode = type === 'assembly' && random.chance(0.15);
    const [kind, module, moveName, keyField] = networkNode
      ? ['network_node.created', 'network_node', 'NetworkNodeCreatedEvent', 'network_node_key']
      : CREATED[type];
    const tick = clock.next();
    const { id, digest } = deployableCreatedEventId(ctx, spec);
    const json = sortKeys({
      [keyField]: { item_id: spec.token, tenant: spec.tenant },
      owner_cap_id: `0x${random.hex(64)}`,
      type_id: 77900 + random.int(60),
    });
    yield timed({
      id, kind, environment: spec.environment, ns: tick.ns, occurredAt: formatTime(tick.ns, tick.offsetMinutes),
      module, moveName, digest, sequence: 0, json, keyField, packageId: random.chance(0.8) ? ctx.worldPackage : ctx.worldPackageV2,
    }, random);
  }
}

/** kind, module, Move event name, key field, entity type the key points at, weight. */
const STREAMS: readonly (readonly [string, string, string, string, EntityType, number])[] = [
  ['inventory.item.deposited', 'inventory', 'ItemDepositedEvent', 'assembly_key', 'assembly', 15],
  ['inventory.item.withdrawn', 'inventory', 'ItemWithdrawnEvent', 'assembly_key', 'assembly', 12],
  ['inventory.item.minted', 'inventory', 'ItemMintedEvent', 'assembly_key', 'assembly', 5],
  ['inventory.item.burned', 'inventory', 'ItemBurnedEvent', 'assembly_key', 'assembly', 3],
  ['inventory.item.destroyed', 'inventory', 'ItemDestroyedEvent', 'assembly_key', 'assembly', 2],
  ['inventory.item.deposited.v2', 'inventory', 'ItemDepositedEventV2', 'storage_unit_key', 'storage', 6],
  ['inventory.item.withdrawn.v2', 'inventory', 'ItemWithdrawnEventV2', 'storage_unit_key', 'storage', 5],
  ['fuel.updated', 'fuel', 'FuelUpdatedEvent', 'network_node_key', 'assembly', 8],
  ['fuel.depleted', 'fuel', 'FuelDepletedEvent', 'network_node_key', 'assembly', 2],
  ['energy.produced', 'energy', 'EnergyProducedEvent', 'network_node_key', 'assembly', 6],
  ['network_node.updated', 'network_node', 'NetworkNodeUpdatedEvent', 'network_node_key', 'assembly', 5],
  ['status.updated', 'status', 'StatusUpdatedEvent', 'assembly_key', 'turret', 10],
  ['gate.jump', 'gate', 'JumpEvent', 'gate_key', 'gate', 6],
  ['rift.spawned', 'rift', 'RiftSpawnedEvent', 'key', 'site', 2],
  ['rift.location.broadcast', 'rift', 'RiftLocationBroadcastEvent', 'key', 'site', 2],
  ['character.updated', 'character', 'CharacterUpdatedEvent', 'character_key', 'character', 3],
];
const STREAM_WEIGHTS = STREAMS.map((stream, n) => [n, stream[5]] as const);

function transactionSize(random: Random): number {
  return random.weighted([[1, 60], [2, 25], [3, 15]]);
}

/** The bulk streams: `count` events in transactions of 1–3. */
function* streamEvents(ctx: Context, count: number): Generator<Timed<Row>> {
  if (count <= 0) return;
  // First pass: how many transactions `count` events make (the same draws are replayed below).
  const sizing = createRandom(ctx.seed, 'events-stream-sizes');
  let transactions = 0;
  for (let total = 0; total < count; transactions += 1) total += transactionSize(sizing);
  const sizes = createRandom(ctx.seed, 'events-stream-sizes');
  const random = createRandom(ctx.seed, 'events-stream');
  const clock = new DescendingClock(createRandom(ctx.seed, 'events-stream-clock'), {
    count: transactions, shares: [40, 45, 15], newest: ctx.generatedNs - 5_000_000_000n, milliseconds: true, tieRate: 0.02, offsetRate: 0.005,
  });
  const tokens = new Map<number, string>();
  const tokenOf = (index: number) => {
    let token = tokens.get(index);
    if (token === undefined) {
      token = entitySpec(ctx, index).token;
      if (tokens.size > 50_000) tokens.clear();
      tokens.set(index, token);
    }
    return token;
  };
  let emitted = 0;
  for (let t = 0; t < transactions; t += 1) {
    const size = Math.min(transactionSize(sizes), count - emitted);
    const tick = clock.next();
    const environment = random.weighted<Environment>([['stillness', 95], ['utopia', 4], ['unknown', 1]]);
    const digest = t % 997 === 500 ? undefined : random.base58(44);
    const occurredAt = formatTime(tick.ns, tick.offsetMinutes);
    for (let sequence = 0; sequence < size; sequence += 1) {
      const [kind, module, moveName, keyField, targetType] = STREAMS[random.weighted(STREAM_WEIGHTS)]!;
      const targets = ofTypeInEnv(ctx.table, targetType, environment);
      const target = targets.length > 0 ? targets[random.int(targets.length)]! : -1;
      const itemId = target >= 0 && ctx.table.altTenant[target] === 0 ? tokenOf(target) : String(900000 + random.int(100000));
      const json: Record<string, unknown> = { [keyField]: { item_id: itemId, tenant: environment } };
      if (module === 'inventory') {
        json.type_id = 77800 + random.int(300);
        json.quantity = 1 + random.int(500);
      } else if (module === 'fuel' || module === 'energy') {
        json.amount = random.int(10_000);
      } else if (module === 'status') {
        json.status = { '@variant': random.pick(['ONLINE', 'OFFLINE', 'ANCHORED']) };
      } else if (module === 'gate') {
        json.character_key = { item_id: String(2112000000 + random.int(100_000)), tenant: environment };
        json.destination_gate_key = { item_id: `0x${(0x5e10 + random.int(5000)).toString(16)}`, tenant: environment };
      } else if (module === 'rift') {
        json.solar_system_id = { item_id: String(30000001 + random.int(50_000)), tenant: environment };
      } else if (module === 'character') {
        json.metadata = { name: random.pick(['Vesna Korr', 'Tom & Jerry', 'Nova 🚀']) };
      }
      const id = digest === undefined ? `event:unknown:${random.hex(24)}` : `event:${digest}:${sequence}`;
      const item = timed({
        id, kind, environment, ns: tick.ns, occurredAt, module, moveName, digest, sequence,
        json: sortKeys(json), keyField, packageId: random.chance(0.8) ? ctx.worldPackage : ctx.worldPackageV2,
      }, random);
      if (emitted === 0) item.row.futureField = { x: 1 };
      emitted += 1;
      yield item;
    }
  }
}

/** How many events the first three producers write (the bulk streams fill up to the target). */
function countAnchoredEvents(ctx: Context): number {
  let count = 0;
  for (const index of ofType(ctx.table, 'character')) {
    if (ctx.table.altTenant[index] === 0) count += 1;
  }
  const killmails = ofType(ctx.table, 'killmail');
  for (let k = 0; k < killmails.length; k += 1) {
    if (killmailHasRaw(k) && ctx.table.altTenant[killmails[k]!] === 0) count += 1;
  }
  for (const type of DEPLOYABLE_TYPES) {
    for (const index of ofType(ctx.table, type)) if (ctx.table.altTenant[index] === 0) count += 1;
  }
  return count;
}

/** All events in file order. */
export function eventRows(ctx: Context): Generator<Timed<Row>> {
  const target = ctx.table.count * ctx.eventsPerEntity;
  const streams = [
    characterEvents(ctx),
    killmailEvents(ctx),
    deployableEvents(ctx),
    streamEvents(ctx, target - countAnchoredEvents(ctx)),
  ].map((stream) => sortTies(stream, 'desc'));
  return mergeDescending(streams);
}
