/**
 * One entity, recomputed from the seed and its index: id, slug, names, cycle and update time,
 * and its row in entities.jsonl. Also the export order of entities (`updated_at DESC, id DESC`).
 *
 * Ids follow export-format.md section 4: `<entityType>:<tenant>:<token>`, the token being a
 * number (`character:stillness:2112000041`), a static type (`enemy:stillness:type:94401`), a short
 * object id (`gate:stillness:0x5e14`) or, for routes, two gate tokens
 * (`route:stillness:0x5e14:0x5e1b`). Tokens are unique per type by construction
 * (`base + typeIndex * stride + jitter`), so ids and slugs are unique without bookkeeping.
 */
import type { Context } from './context.ts';
import { envOf, ofTypeInEnv, typeOf } from './entity-table.ts';
import { compareBytes } from './go-json.ts';
import { nameEntity } from './names.ts';
import { createRandom, type Random } from './random.ts';
import { formatTime } from './time.ts';
import type { EntityType, Environment } from './vocabulary.ts';

export interface EntitySpec {
  index: number;
  type: EntityType;
  environment: Environment;
  tenant: string;
  cycle: number | undefined;
  typeIndex: number;
  token: string;
  id: string;
  slug: string;
  name: string;
  displayName?: string;
  summary?: string;
  placeholder: boolean;
  updatedNs: bigint;
  updatedAt: string;
}

/** URL-safe alias: lowercase, runs of non-alphanumerics to `-`, at most 120 characters. */
export function slugify(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 120);
}

function numbered(base: number, typeIndex: number, stride: number, random: Random): number {
  return base + typeIndex * stride + random.int(stride);
}

/** The unique-per-type token of an entity (routes excluded: they depend on gates). */
function tokenOf(entityType: EntityType, k: number, random: Random): string {
  switch (entityType) {
    case 'character': return String(numbered(2112000000, k, 41, random));
    case 'tribe': return k === 0 ? '1000167' : String(numbered(98000535, k, 3, random));
    case 'system': return String(numbered(30000001, k, 5, random));
    case 'constellation': return String(numbered(20000001, k, 3, random));
    case 'region': return String(numbered(10000001, k, 2, random));
    case 'killmail': return String(numbered(50000, k, 3, random));
    case 'assembly': return String(numbered(1000000000, k, 13, random));
    case 'storage': return String(numbered(88000, k, 5, random));
    case 'turret': return String(numbered(91000000, k, 7, random));
    case 'gate': return `0x${numbered(0x5e10, k, 5, random).toString(16)}`;
    case 'item': return `type:${numbered(77800, k, 3, random)}`;
    case 'material': return `type:${numbered(71000, k, 3, random)}`;
    case 'ship': return `type:${numbered(81000, k, 2, random)}`;
    case 'structure': return `type:${numbered(84000, k, 2, random)}`;
    case 'enemy': return `type:${numbered(94400, k, 2, random)}`;
    case 'blueprint': return String(numbered(960000, k, 3, random));
    case 'recipe': return String(numbered(970000, k, 3, random));
    case 'resource_object': return String(numbered(600000, k, 7, random));
    case 'site': return `rift-${numbered(4000, k, 3, random)}`;
    case 'unknown': return `0x${numbered(0xa000000, k, 17, random).toString(16)}`;
    case 'player': return `0x${random.hex(40)}`;
    case 'alliance': return String(numbered(99000000, k, 3, random));
    case 'market': return `market-${numbered(700, k, 3, random)}`;
    case 'route': throw new Error('route tokens come from routeEnds');
  }
}

/** The two gates a route joins: global indices when both exist in its environment, else -1. */
export interface RouteEnds {
  from: number;
  to: number;
  fromToken: string;
  toToken: string;
}

/**
 * Route r of an environment joins gate (r mod G) to gate (r mod G + 1 + floor(r / G)) mod G, a
 * pair no other route of that environment gets. With too few gates the route points at gates
 * outside the bundle (`0xfeed…`), an endpoint the loader must tolerate.
 */
export function routeEnds(ctx: Context, i: number): RouteEnds {
  const gates = ofTypeInEnv(ctx.table, 'gate', envOf(ctx.table, i));
  const rank = ctx.table.envRank[i]!;
  const g = gates.length;
  const offset = g > 0 ? Math.floor(rank / g) + 1 : 0;
  if (g >= 2 && offset < g) {
    const from = gates[rank % g]!;
    const to = gates[(rank % g + offset) % g]!;
    return { from, to, fromToken: entitySpec(ctx, from).token, toToken: entitySpec(ctx, to).token };
  }
  return { from: -1, to: -1, fromToken: `0xfeed${rank.toString(16)}a`, toToken: `0xfeed${rank.toString(16)}b` };
}

/** Specs kept per context; a full cache is cleared rather than evicted piecemeal (specs are pure). */
const SPEC_CACHE_LIMIT = 100_000;

/** Recently computed specs by index, per context (gone with the context). */
const specCaches = new WeakMap<Context, Map<number, EntitySpec>>();

/** Everything about entity `i` that rows need; pure in (seed, i). Callers must not mutate it. */
export function entitySpec(ctx: Context, i: number): EntitySpec {
  let cache = specCaches.get(ctx);
  if (cache === undefined) specCaches.set(ctx, (cache = new Map()));
  let spec = cache.get(i);
  if (spec === undefined) {
    if (cache.size >= SPEC_CACHE_LIMIT) cache.clear();
    spec = computeSpec(ctx, i);
    cache.set(i, spec);
  }
  return spec;
}

function computeSpec(ctx: Context, i: number): EntitySpec {
  const { table } = ctx;
  const entityType = typeOf(table, i);
  const environment = envOf(table, i);
  const tenant = table.altTenant[i] === 1 ? 'liminality' : environment;
  const typeIndex = table.typeIndex[i]!;
  let token: string;
  let routeLabel: string | undefined;
  if (entityType === 'route') {
    const ends = routeEnds(ctx, i);
    token = `${ends.fromToken}:${ends.toToken}`;
    const label = (index: number, fallback: string) => (index >= 0 ? labelOf(entitySpec(ctx, index)) : `Gate ${fallback}`);
    routeLabel = `Route ${label(ends.from, ends.fromToken)} → ${label(ends.to, ends.toToken)}`;
  } else {
    token = tokenOf(entityType, typeIndex, createRandom(ctx.seed, 'entity-token', i));
  }
  const naming = nameEntity(entityType, typeIndex, token, createRandom(ctx.seed, 'entity-name', i));
  const cycle = table.cycle[i]! === 0 ? undefined : table.cycle[i]!;
  const spec: EntitySpec = {
    index: i,
    type: entityType,
    environment,
    tenant,
    cycle,
    typeIndex,
    token,
    id: `${entityType}:${tenant}:${token}`,
    slug: slugify(`${entityType}-${token}-${tenant}`),
    name: routeLabel ?? naming.name,
    placeholder: naming.placeholder,
    updatedNs: table.updatedNs[i]!,
    updatedAt: formatTime(table.updatedNs[i]!, table.updatedOffset[i]!),
  };
  if (naming.displayName !== undefined) spec.displayName = routeLabel ?? naming.displayName;
  if (naming.summary !== undefined) spec.summary = naming.summary;
  return spec;
}

/** The label the API shows: displayName, else name. */
export function labelOf(spec: EntitySpec): string {
  return spec.displayName ?? spec.name;
}

/** The entity row of entities.jsonl (and `entity` of current_entities.jsonl), fields in struct order. */
export function entityRow(spec: EntitySpec): Record<string, unknown> {
  const row: Record<string, unknown> = {
    id: spec.id,
    slug: spec.slug,
    entityType: spec.type,
    name: spec.name,
  };
  if (spec.displayName !== undefined) row.displayName = spec.displayName;
  if (spec.summary !== undefined) row.summary = spec.summary;
  row.environment = spec.environment;
  if (spec.cycle !== undefined) row.cycle = spec.cycle;
  row.updatedAt = spec.updatedAt;
  return row;
}

/** The first entity of block 0 carries a field the format does not know yet. */
export function hasFutureField(spec: EntitySpec): boolean {
  return spec.index === 0;
}

/**
 * Entity export order: index order (updatedAt never increases with the index), with runs of
 * equal instants ordered by id descending, as `ORDER BY updated_at DESC, id DESC` gives.
 */
export function exportOrder(ctx: Context): Int32Array {
  const { table } = ctx;
  const order = new Int32Array(table.count);
  let start = 0;
  while (start < table.count) {
    let end = start + 1;
    while (end < table.count && table.updatedNs[end] === table.updatedNs[start]) end += 1;
    if (end - start === 1) {
      order[start] = start;
    } else {
      const run = Array.from({ length: end - start }, (_, n) => ({ i: start + n, id: entitySpec(ctx, start + n).id }));
      run.sort((a, b) => compareBytes(b.id, a.id));
      run.forEach((entry, n) => (order[start + n] = entry.i));
    }
    start = end;
  }
  return order;
}
