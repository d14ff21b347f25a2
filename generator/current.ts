/**
 * current_entities.jsonl and current_relations.jsonl rows.
 *
 * A current entity row embeds the entity, its facts map (last row per key wins), the relations
 * touching it as current-relation objects (with id, endpoint types and display names; endpoints
 * outside the bundle have no display name), its source ids and a `derived` summary. Which
 * relations touch an entity comes from the graph links gathered while relations.jsonl is
 * written (`GraphLinks`), so nothing is scanned twice. A tribe's incoming `belongs_to` edges are
 * trimmed to characters created in cycle 6 and `memberCount` counts what is left, as the writer
 * does; the big stillness tribe makes a row of several hundred KB at scale 400.
 */
import { characterCreatedEvent } from './chain-ids.ts';
import type { Context } from './context.ts';
import { BLOCK_SIZE } from './entity-table.ts';
import { entityRow, entitySpec, labelOf, type EntitySpec } from './entities.ts';
import { compareBytes } from './go-json.ts';
import { factsMap, factsOf } from './facts.ts';
import { createRandom } from './random.ts';
import { relationId, relationsAt, type RelationSpec } from './relations.ts';
import { CYCLE6_START, drawDigits, EARLIEST, formatTime, NANOS_PER_SECOND, truncate } from './time.ts';
import { CURRENT_TYPES, type EntityType } from './vocabulary.ts';

/** For each entity index, the indices of other entities whose relations touch it. */
export type GraphLinks = Map<number, number[]>;

/** Records that relations written at `emitter` touch the other endpoints. */
export function linkRelations(links: GraphLinks, emitter: number, relations: readonly RelationSpec[]): void {
  for (const relation of relations) {
    for (const endpoint of [relation.subjectIndex, relation.objectIndex]) {
      if (endpoint < 0 || endpoint === emitter) continue;
      const list = links.get(endpoint);
      if (list === undefined) links.set(endpoint, [emitter]);
      else if (list[list.length - 1] !== emitter) list.push(emitter);
    }
  }
}

const CURRENT_TYPE_SET = new Set<EntityType>(CURRENT_TYPES);

/** Whether an entity gets a current row: the 17 types, not environment `unknown`, ~93% of the rest. */
export function hasCurrentRow(ctx: Context, spec: EntitySpec): boolean {
  if (!CURRENT_TYPE_SET.has(spec.type) || spec.environment === 'unknown') return false;
  return spec.index < BLOCK_SIZE || createRandom(ctx.seed, 'current', spec.index).chance(0.93);
}

function endpointType(id: string): string {
  return id.slice(0, id.indexOf(':'));
}

/** A current-relation object (current_relations.jsonl row shape), fields in struct order. */
export function currentRelation(ctx: Context, relation: RelationSpec): Record<string, unknown> {
  const id = relationId(relation);
  const subject = relation.subjectIndex >= 0 ? entitySpec(ctx, relation.subjectIndex) : undefined;
  const object = relation.objectIndex >= 0 ? entitySpec(ctx, relation.objectIndex) : undefined;
  const random = createRandom(ctx.seed, 'relation-created', id);
  const anchor = subject?.updatedNs ?? ctx.generatedNs;
  let created = truncate(anchor - BigInt(random.int(3 * 86_400)) * NANOS_PER_SECOND - BigInt(random.int(1_000_000_000)), drawDigits(random, false));
  if (created < EARLIEST) created = EARLIEST;
  const row: Record<string, unknown> = {
    id,
    subjectEntityId: relation.subject,
    subjectEntityType: subject?.type ?? endpointType(relation.subject),
  };
  if (subject) row.subjectDisplayName = labelOf(subject);
  row.predicate = relation.predicate;
  row.objectEntityId = relation.object;
  row.objectEntityType = object?.type ?? endpointType(relation.object);
  if (object) row.objectDisplayName = labelOf(object);
  row.sourceId = relation.sourceId;
  row.confidence = relation.confidence;
  row.environment = relation.environment;
  row.createdAt = formatTime(created);
  return row;
}

function reference(ctx: Context, index: number, id: string): Record<string, unknown> {
  if (index < 0) return { entityId: id, entityType: endpointType(id) };
  const spec = entitySpec(ctx, index);
  return { entityId: spec.id, entityType: spec.type, displayName: labelOf(spec) };
}

/** Relations touching the entity (written at it or at linked entities), last copy of a key wins. */
function relationsTouching(ctx: Context, spec: EntitySpec, links: GraphLinks): RelationSpec[] {
  const all = [...relationsAt(ctx, spec)];
  for (const emitter of links.get(spec.index) ?? []) {
    for (const relation of relationsAt(ctx, entitySpec(ctx, emitter))) {
      if (relation.subjectIndex === spec.index || relation.objectIndex === spec.index) all.push(relation);
    }
  }
  const byId = new Map<string, RelationSpec>();
  for (const relation of all) {
    const id = relationId(relation);
    byId.delete(id);
    byId.set(id, relation);
  }
  return [...byId.values()];
}

function createdInCycle6(ctx: Context, index: number): boolean {
  const event = characterCreatedEvent(ctx, entitySpec(ctx, index));
  return event !== undefined && event.ns >= CYCLE6_START;
}

/** The current_entities.jsonl row of an entity. */
export function currentEntityRow(ctx: Context, spec: EntitySpec, links: GraphLinks): Record<string, unknown> {
  const facts = factsOf(ctx, spec);
  const map = factsMap(facts);
  const relations = relationsTouching(ctx, spec, links);
  const outgoing = relations.filter((relation) => relation.subjectIndex === spec.index);
  let incoming = relations.filter((relation) => relation.objectIndex === spec.index && relation.subjectIndex !== spec.index);
  if (spec.type === 'tribe') {
    incoming = incoming.filter((relation) => relation.predicate !== 'belongs_to' || createdInCycle6(ctx, relation.subjectIndex));
  }
  const row: Record<string, unknown> = { entity: entityRow(spec), facts: map };
  if (outgoing.length > 0) row.outgoingRelations = outgoing.map((relation) => currentRelation(ctx, relation));
  if (incoming.length > 0) row.incomingRelations = incoming.map((relation) => currentRelation(ctx, relation));
  const sources = new Set<string>([...facts.map((fact) => fact.sourceId), ...outgoing.map((r) => r.sourceId), ...incoming.map((r) => r.sourceId)]);
  if (sources.size > 0) row.sourceIds = [...sources].sort(compareBytes);
  const derived = derive(ctx, spec, map, outgoing, incoming);
  if (Object.keys(derived).length > 0) row.derived = derived;
  if (spec.type === 'system' && spec.typeIndex === 0) row.futureField = { x: 1 };
  return row;
}

function derive(
  ctx: Context, spec: EntitySpec, facts: Record<string, unknown>, outgoing: readonly RelationSpec[], incoming: readonly RelationSpec[],
): Record<string, unknown> {
  const derived: Record<string, unknown> = {};
  const profile: Record<string, unknown> = {};
  const text = (key: string) => (typeof facts[key] === 'string' ? (facts[key] as string) : undefined);
  const setIf = (target: Record<string, unknown>, key: string, value: unknown) => {
    if (value !== undefined) target[key] = value;
  };
  setIf(profile, 'metadataName', text('metadata_name') ?? (spec.type === 'tribe' && !spec.placeholder ? spec.name : undefined));
  setIf(profile, 'metadataDescription', text('metadata_description'));
  setIf(profile, 'metadataUrl', text('metadata_url'));
  setIf(profile, 'tag', text('tag'));
  setIf(profile, 'description', text('description'));
  setIf(profile, 'url', text('url'));
  if (Array.isArray(facts.aliases)) profile.aliases = facts.aliases;
  if (Object.keys(profile).length > 0) derived.profile = profile;
  const out = (predicate: string) => outgoing.find((relation) => relation.predicate === predicate);
  const tribe = out('belongs_to');
  if (tribe) derived.tribe = reference(ctx, tribe.objectIndex, tribe.object);
  const owner = out('owned_by');
  if (owner) derived.owner = reference(ctx, owner.objectIndex, owner.object);
  const located = out('located_in');
  if (located && spec.type !== 'system' && spec.type !== 'constellation') derived.system = reference(ctx, located.objectIndex, located.object);
  if (located && spec.type === 'system') {
    derived.constellation = reference(ctx, located.objectIndex, located.object);
    const region = relationsAt(ctx, entitySpec(ctx, located.objectIndex)).find((relation) => relation.predicate === 'located_in');
    if (region) derived.region = reference(ctx, region.objectIndex, region.object);
  }
  if (located && spec.type === 'constellation') derived.region = reference(ctx, located.objectIndex, located.object);
  const cap = out('has_owner_cap');
  if (cap) derived.ownerCap = reference(ctx, cap.objectIndex, cap.object);
  const hash = out('has_location_hash');
  if (hash) derived.locationHash = reference(ctx, hash.objectIndex, hash.object);
  const count = (list: readonly RelationSpec[], ...predicates: string[]) => list.filter((relation) => predicates.includes(relation.predicate)).length;
  const counters: [string, number][] = [
    ['memberCount', spec.type === 'tribe' ? count(incoming, 'belongs_to') : 0],
    ['ownedObjectCount', count(incoming, 'owned_by')],
    ['connectedSystemCount', spec.type === 'system' ? count(incoming, 'located_in', 'occurred_in') > 0 ? 1 + (spec.index % 4) : 0 : 0],
    ['routeEdgeCount', count(outgoing, 'links_to', 'observed_between') + count(incoming, 'links_to', 'observed_between')],
    ['killmailCount', count(incoming, 'victim', 'killer', 'occurred_in', 'reported_by')],
  ];
  const activity = counters[1]![1] + counters[4]![1];
  counters.push(['publicActivityCount', spec.type === 'character' ? activity : 0]);
  for (const [key, value] of counters) if (value > 0) derived[key] = value;
  return derived;
}
