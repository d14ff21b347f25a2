/**
 * chain_objects.jsonl: raw object versions as fetched, oldest first (`observed_at ASC, id ASC`),
 * about 1.2 per entity. An object (`objectId`) appears in 1–3 consecutive versions
 * (`object:<objectId>:<version>`); a few rows use the fallback id `object:unknown:<24 hex>` and
 * have no `version`; ~3% lack the optional package/module/type name columns; the oldest row has
 * an unknown field. `observedAt` is fetch time (nanosecond precision), spread over both cycle
 * windows and before; no cycle field.
 */
import type { Context } from './context.ts';
import { sortKeys } from './go-json.ts';
import { sortTies, type Timed } from './ordering.ts';
import { createRandom } from './random.ts';
import { SOURCE } from './sources.ts';
import { DescendingClock, formatTime } from './time.ts';
import type { Environment } from './vocabulary.ts';

export const CHAIN_OBJECTS_PER_ENTITY = 1.2;

/** Move type name, module. */
const OBJECT_TYPES: readonly (readonly [string, string])[] = [
  ['Assembly', 'assembly'], ['Character', 'character'], ['PlayerProfile', 'character'], ['Gate', 'gate'],
  ['Killmail', 'killmail'], ['NetworkNode', 'network_node'], ['Rift', 'rift'], ['StorageUnit', 'storage_unit'],
  ['Turret', 'turret'],
];

type Row = Record<string, unknown>;

function* objectsAscending(ctx: Context): Generator<Timed<Row>> {
  const count = Math.round(ctx.table.count * CHAIN_OBJECTS_PER_ENTITY);
  // A descending clock, read backwards: instants are drawn newest first, written oldest first.
  const clock = new DescendingClock(createRandom(ctx.seed, 'objects-clock'), {
    count, shares: [50, 35, 15], newest: ctx.generatedNs - 30_000_000_000n, milliseconds: false, tieRate: 0.02, offsetRate: 0.01,
  });
  const ns = new BigInt64Array(count);
  const offsets = new Int16Array(count);
  for (let n = count - 1; n >= 0; n -= 1) {
    const tick = clock.next();
    ns[n] = tick.ns;
    offsets[n] = tick.offsetMinutes;
  }
  const random = createRandom(ctx.seed, 'objects');
  let row = 0;
  for (let slot = 0; row < count; slot += 1) {
    const [typeName, module] = random.pick(OBJECT_TYPES);
    const objectId = `0x${random.hex(64)}`;
    const environment = random.weighted<Environment>([['stillness', 95], ['utopia', 4], ['unknown', 1]]);
    const packageId = random.chance(0.8) ? ctx.worldPackage : ctx.worldPackageV2;
    const fallback = slot === 5 || random.chance(0.002);
    const versions = Math.min(count - row, fallback ? 1 : random.between(1, 3));
    let version = random.between(1, 500);
    const itemId = String(random.between(1000, 99_999_999));
    for (let v = 0; v < versions; v += 1, row += 1) {
      version += random.between(1, 40);
      const digest = random.base58(44);
      const json: Record<string, unknown> = { key: { item_id: itemId, tenant: environment } };
      if (module !== 'character' && module !== 'killmail') json.owner_cap_id = `0x${random.hex(64)}`;
      json.type_id = String(77000 + random.int(2000));
      if (module === 'rift') json.expires_at_ms = 1_782_000_000_000 + random.int(10_000_000);
      const bare = random.chance(0.03);
      const id = fallback ? `object:unknown:${random.hex(24)}` : `object:${objectId}:${version}`;
      const out: Row = { id, objectId, environment, typeRepr: `${packageId}::${module}::${typeName}` };
      if (!bare) {
        out.packageId = packageId;
        out.module = module;
        out.typeName = typeName;
      }
      if (!fallback) out.version = String(version);
      out.digest = digest;
      out.sourceId = SOURCE.chainObjects;
      const payload: Row = {
        confidence: 'verified', digest, json: sortKeys(json), module, moveType: `${packageId}::${module}::${typeName}`,
        objectId, packageId, reviewStatus: 'candidate', sourceKind: 'chain_object', typeName,
      };
      if (!fallback) payload.version = String(version);
      out.payload = sortKeys(payload);
      out.observedAt = formatTime(ns[row]!, offsets[row]!);
      if (row === 0) out.futureField = { x: 1 };
      yield { ns: ns[row]!, id, row: out };
    }
  }
}

/** All chain objects in file order. */
export function chainObjectRows(ctx: Context): Generator<Timed<Row>> {
  return sortTies(objectsAscending(ctx), 'asc');
}
