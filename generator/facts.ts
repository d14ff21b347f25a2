/**
 * Facts of one entity, recomputed from the seed: 4–17 keys depending on the type, sorted by key
 * (then source id) as the writer groups them. Values vary in type per key across rows
 * (`tribe_id` is a number in most rows and a string in others; arrays, objects, booleans,
 * floats and `null` occur), cycles sometimes differ from the entity's, some `publishedAt` are
 * the Go zero instant.
 *
 * Duplicate keys (last row wins): characters whose type index k has k % 500 === 3 get their
 * `metadata_name` fact (source `source:chain:chain-testnet:graphql`) twice, the second row with
 * value `<name> (renamed)`. The same key from two different sources (`metadata_name` from the
 * chain and the world API) is common and is not a duplicate under the API's key.
 */
import { characterCreatedEvent, deployableCreatedEventId, hasEvidenceFacts } from './chain-ids.ts';
import type { Context } from './context.ts';
import { entitySpec, labelOf, type EntitySpec } from './entities.ts';
import { compareBytes, sortKeys } from './go-json.ts';
import { killmailChainJson, killmailSpec } from './killmails.ts';
import { createRandom, type Random } from './random.ts';
import { relationsAt, type RelationSpec } from './relations.ts';
import { SOURCE, sourceKind, universeSource } from './sources.ts';
import { formatTime, NANOS_PER_SECOND, truncate, ZERO_TIME, drawDigits } from './time.ts';

export interface FactRow {
  entityId: string;
  key: string;
  value: unknown;
  sourceId: string;
  confidence: string;
  environment: string;
  cycle?: number;
  reviewStatus: string;
  importId?: string;
  publishedAt?: string;
  futureField?: unknown;
}

interface Draft {
  key: string;
  value: unknown;
  sourceId: string;
  confidence?: string;
}

/** True for characters whose `metadata_name` fact is written twice. */
export function hasDuplicateFact(spec: EntitySpec): boolean {
  return spec.type === 'character' && spec.typeIndex % 500 === 3;
}

const DEFAULT_CONFIDENCE: Record<string, string> = {
  chain_event: 'verified', chain_object: 'verified', static_client_data: 'verified', world_api: 'verified',
  datahub: 'probable', manual_inference: 'probable', reverse_engineered: 'probable', observed_gameplay: 'reported',
  community_report: 'reported', onchain: 'verified',
};

function tokenNumber(id: string): string {
  return id.slice(id.lastIndexOf(':') + 1);
}

function coordinate(random: Random): number {
  // Safe integers (Go and JavaScript print them alike), a few with .5.
  const value = random.int(2 ** 40) * (random.chance(0.5) ? -1 : 1);
  return random.chance(0.1) ? value + 0.5 : value;
}

function firstRelation(relations: readonly RelationSpec[], predicate: string): RelationSpec | undefined {
  return relations.find((relation) => relation.predicate === predicate);
}

function drafts(ctx: Context, spec: EntitySpec, random: Random): Draft[] {
  const out: Draft[] = [];
  const add = (key: string, value: unknown, sourceId: string, confidence?: string) => {
    out.push(confidence === undefined ? { key, value, sourceId } : { key, value, sourceId, confidence });
  };
  const relations = relationsAt(ctx, spec);
  const chain = SOURCE.chain;
  switch (spec.type) {
    case 'character': {
      add('item_id', spec.token, chain);
      add('tenant', spec.tenant, chain);
      if (random.chance(0.5)) add('character_id', Number(spec.token), chain);
      add('character_address', `0x${random.hex(64)}`, chain);
      const tribe = firstRelation(relations, 'belongs_to');
      if (tribe) {
        const id = tokenNumber(tribe.object);
        add('tribe_id', random.chance(0.7) ? Number(id) : id, chain);
      }
      if (!spec.placeholder || hasDuplicateFact(spec)) add('metadata_name', spec.name, chain);
      if (random.chance(0.2)) add('metadata_name', labelOf(spec), SOURCE.worldApi);
      if (random.chance(0.3)) add('metadata_description', random.chance(0.3) ? null : 'Flies & fights <carefully>.', chain);
      if (random.chance(0.15)) add('aliases', [spec.name.toLowerCase(), `${spec.name} Alt`], SOURCE.community);
      if (random.chance(0.5)) add('observed_at', formatTime(spec.updatedNs), SOURCE.worldApi);
      const created = characterCreatedEvent(ctx, spec);
      if (created && hasEvidenceFacts(ctx, spec)) {
        add('source_event_id', created.id, chain);
        add('source_event_kind', 'character.created', chain);
        add('transaction_digest', created.digest, chain);
      }
      break;
    }
    case 'killmail': {
      const km = killmailSpec(ctx, spec.typeIndex);
      const source = km.hasRaw ? chain : SOURCE.datahub;
      const json = killmailChainJson(ctx, km);
      add('item_id', spec.token, source);
      add('tenant', spec.tenant, source);
      add('kill_timestamp', json.kill_timestamp, source);
      add('loss_type', km.lossType, source);
      add('solar_system_id', (json.solar_system_id as { item_id: string }).item_id, source);
      add('victim_id', json.victim_id, source);
      if (json.killer_id !== undefined) add('killer_id', json.killer_id, source);
      if (km.killerMode === 'npc-type') add('killer_type_id', km.k % 2 === 0 ? km.killerTypeNumber : Number(km.killerTypeNumber), source);
      if (json.reported_by_character_id !== undefined) add('reported_by_character_id', json.reported_by_character_id, source);
      if (km.hasRaw) {
        add('source_event_id', km.eventId, chain);
        add('transaction_digest', km.digest, chain);
        add('package_id', ctx.worldPackage, chain);
        add('module', 'killmail', chain);
      }
      add('observed_at', km.occurredAt, source);
      break;
    }
    case 'assembly':
    case 'storage':
    case 'turret':
    case 'gate': {
      const module = spec.type === 'storage' ? 'storage_unit' : spec.type;
      add('item_id', spec.token, chain);
      add('tenant', spec.tenant, chain);
      add('type_id', 77900 + random.int(60), SOURCE.chainObjects);
      add('owner_cap_id', `0x${random.hex(64)}`, SOURCE.chainObjects);
      add('location_hash', `0x${random.hex(64)}`, SOURCE.chainObjects);
      add('status', random.pick([{ '@variant': 'ONLINE' }, { '@variant': 'OFFLINE' }, 'online', 'anchored', null]), SOURCE.chainObjects);
      const system = firstRelation(relations, 'located_in');
      if (system) add('solar_system_id', tokenNumber(system.object), system.sourceId);
      if (!spec.placeholder) add('metadata_name', spec.name, chain);
      if (random.chance(0.4)) add('metadata_description', 'Open to allies & friends.', chain);
      if (random.chance(0.3)) add('metadata_url', random.chance(0.5) ? null : `https://example.invalid/${spec.slug}?a=1&b=2`, chain);
      add('package_id', ctx.worldPackage, chain);
      add('module', module, chain);
      const created = deployableCreatedEventId(ctx, spec);
      add('source_event_id', created.id, chain);
      add('transaction_digest', created.digest, chain);
      add('x', coordinate(random), SOURCE.reverse);
      add('y', coordinate(random), SOURCE.reverse);
      add('z', coordinate(random), SOURCE.reverse);
      if (random.chance(0.5)) add('online', random.chance(0.7), SOURCE.chainObjects);
      if (spec.type === 'assembly') add('fuel_amount', random.int(5000), SOURCE.chainObjects);
      const link = firstRelation(relations, 'links_to');
      if (link) add('linked_gate_id', tokenNumber(link.object), chain);
      break;
    }
    case 'system': {
      const universe = universeSource(spec.environment);
      add('solar_system_id', Number(spec.token), universe);
      add('name', spec.name, universe);
      const constellation = firstRelation(relations, 'located_in');
      add('constellation_id', constellation ? Number(tokenNumber(constellation.object)) : null, universe);
      add('region_id', 10000001 + random.int(60), universe);
      add('x', coordinate(random), universe);
      add('y', coordinate(random), universe);
      add('z', coordinate(random), universe);
      add('security_status', random.int(10) / 10, universe);
      if (random.chance(0.2)) add('tag', random.pick(['hub', 'border', 'null']), SOURCE.community);
      break;
    }
    case 'constellation':
    case 'region': {
      const universe = universeSource(spec.environment);
      add(`${spec.type}_id`, Number(spec.token), universe);
      add('name', spec.name, universe);
      const region = firstRelation(relations, 'located_in');
      if (region) add('region_id', Number(tokenNumber(region.object)), universe);
      add('system_count', 1 + random.int(120), universe);
      if (spec.type === 'region') add('constellation_count', 1 + random.int(20), universe);
      if (random.chance(0.3)) add('description', 'Far from the core & quiet.', universe);
      break;
    }
    case 'tribe': {
      add('tribe_id', random.chance(0.6) ? Number(spec.token) : spec.token, chain);
      add('name', spec.name, chain);
      if (random.chance(0.6) || spec.typeIndex < 2) add('tag', random.pick(['ASH', 'VGL', 'RST', '紅']), SOURCE.community);
      if (random.chance(0.4)) add('description', 'Miners & haulers <since cycle 3>.', SOURCE.community);
      if (random.chance(0.3)) add('url', `https://tribes.example.invalid/${spec.token}`, SOURCE.community);
      add('member_count', random.int(400), chain);
      if (random.chance(0.3)) add('aliases', [spec.name.toUpperCase()], SOURCE.community);
      add('founded_at', formatTime(spec.updatedNs - BigInt(random.int(10_000_000)) * NANOS_PER_SECOND), chain);
      break;
    }
    case 'item':
    case 'material':
    case 'ship':
    case 'structure':
    case 'blueprint':
    case 'recipe':
    case 'enemy': {
      const source = spec.type === 'enemy' ? SOURCE.enemies : spec.type === 'recipe' || spec.type === 'blueprint' ? SOURCE.recipes : SOURCE.types;
      add('type_id', Number(tokenNumber(spec.id)), source);
      add('group_id', 100 + random.int(900), source);
      add('name', spec.name, source);
      add('mass', random.int(1_000_000) + (random.chance(0.5) ? 0.5 : 0), source);
      add('volume', random.int(5000) / 4, source);
      add('published', random.chance(0.9), source);
      if (random.chance(0.3)) add('aliases', [spec.name.toLowerCase()], SOURCE.community);
      if (random.chance(0.2)) add('icon_id', null, source);
      if (spec.type === 'recipe' || spec.type === 'blueprint') {
        add('inputs', [{ quantity: 1 + random.int(50), type_id: 77800 + random.int(300) }, { quantity: 1 + random.int(9), type_id: 71000 + random.int(300) }], source);
      }
      if (spec.type === 'enemy') {
        add('bounty', random.int(100_000), source);
        add('faction', random.pick(['Drifters', 'Rogue Drones', 'Sleepers']), source);
      }
      break;
    }
    case 'route': {
      const [from, to] = relations.filter((relation) => relation.predicate === 'observed_between');
      if (from) add('source_gate_id', tokenNumber(from.object), chain);
      if (to) add('destination_gate_id', tokenNumber(to.object), chain);
      add('jump_count', random.int(5000), SOURCE.observed);
      add('observed_at', formatTime(spec.updatedNs), SOURCE.observed);
      break;
    }
    case 'resource_object':
    case 'site': {
      add(spec.type === 'site' ? 'rift_id' : 'item_id', spec.token, SOURCE.observed);
      add(spec.type === 'site' ? 'status' : 'resource_type', random.pick(['active', 'depleted', 'Veldspar']), SOURCE.observed);
      const system = firstRelation(relations, 'located_in');
      if (system) add('solar_system_id', tokenNumber(system.object), SOURCE.observed);
      add('quantity', random.int(100_000), SOURCE.observed);
      break;
    }
    case 'unknown':
      add('raw_id', spec.token, SOURCE.reverse);
      add('note', 'Seen in a dump; meaning unclear <needs review> & unverified.', SOURCE.manual);
      break;
    case 'player':
      add('address', spec.token, chain);
      add('character_ids', [String(2112000000 + random.int(1000)), String(2112000000 + random.int(1000))], chain);
      break;
    case 'alliance':
      add('alliance_id', Number(spec.token), SOURCE.community);
      add('name', spec.name, SOURCE.community);
      add('member_tribes', [98000535 + random.int(100), 98000535 + random.int(100)], SOURCE.community);
      break;
    case 'market':
      add('market_id', spec.token, SOURCE.manual);
      add('order_count', random.int(300), SOURCE.manual);
      break;
  }
  return out;
}

const REVIEW_WEIGHTS: readonly (readonly [string, number])[] = [
  ['published', 35], ['reviewed', 30], ['candidate', 25], ['superseded', 5], ['rejected', 5],
];

/** The facts.jsonl rows of an entity, in file order (duplicates included). */
export function factsOf(ctx: Context, spec: EntitySpec): FactRow[] {
  const random = createRandom(ctx.seed, 'facts', spec.index);
  const list = drafts(ctx, spec, random);
  list.sort((a, b) => compareBytes(a.key, b.key) || compareBytes(a.sourceId, b.sourceId));
  const rows: FactRow[] = [];
  for (const draft of list) {
    const confidence = draft.confidence
      ?? (random.chance(0.06) ? random.pick(['stale', 'unknown', 'reported', 'probable']) : DEFAULT_CONFIDENCE[sourceKind(draft.sourceId)] ?? 'unknown');
    // Built in struct order: entityId, key, value, sourceId, confidence, environment, cycle, reviewStatus, ...
    const row = {
      entityId: spec.id,
      key: draft.key,
      value: sortKeys(draft.value),
      sourceId: draft.sourceId,
      confidence,
      environment: spec.environment,
    } as FactRow;
    const cycle = random.chance(0.08) ? (spec.cycle === 6 ? 5 : 6) : spec.cycle;
    if (cycle !== undefined) row.cycle = cycle;
    row.reviewStatus = random.weighted(REVIEW_WEIGHTS);
    if (random.chance(0.4)) row.importId = `import:${draft.sourceId.split(':')[1]}:${String(random.between(1, 28)).padStart(2, '0')}06`;
    const published = random.next();
    if (row.reviewStatus === 'published' && published < 0.85) {
      const ns = truncate(spec.updatedNs - BigInt(random.int(86_400_000)) * 1_000_000n + BigInt(random.int(1_000_000)), drawDigits(random, false));
      row.publishedAt = formatTime(ns);
    } else if (published > 0.995) {
      row.publishedAt = ZERO_TIME;
    }
    rows.push(row);
    if (hasDuplicateFact(spec) && draft.key === 'metadata_name' && draft.sourceId === SOURCE.chain) {
      rows.push({ ...row, value: `${spec.name} (renamed)` });
    }
  }
  if (spec.index === 1 && rows.length > 0) rows[0]!.futureField = { x: 1 };
  return rows;
}

/** A fact row as written (fields in struct order; FactRow is built in that order already). */
export function factRow(fact: FactRow): Record<string, unknown> {
  return fact as unknown as Record<string, unknown>;
}

/** The `facts` map of a current row: latest value per key (later rows win). */
export function factsMap(facts: readonly FactRow[]): Record<string, unknown> {
  const map: Record<string, unknown> = {};
  for (const fact of facts) map[fact.key] = fact.value;
  return sortKeys(map);
}

/** An entity by index, for callers that only have indices. */
export function factsAt(ctx: Context, index: number): FactRow[] {
  return factsOf(ctx, entitySpec(ctx, index));
}
