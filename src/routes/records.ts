/**
 * JSON Schemas (2020-12, as OpenAPI 3.1 uses them) of what the routes answer in `data`: the
 * bundle's records as export-format.md defines them, and the gateway's own documents.
 *
 * Rows are answered verbatim, so record schemas stay open (`additionalProperties` allowed: an
 * export may carry fields this version does not know), a field whose type varies is left
 * unconstrained (`facts.value`, payloads, `raw`, `metadata`), and `required` lists only what
 * the loader guarantees on every row it accepts (the verifier's fields, `src/indices`), not
 * every field registry exports happen to carry. Closed vocabularies are named in
 * descriptions, not enforced: a new confidence label must not make an answer "invalid".
 * The gateway's own shapes (envelope, errors, health, root, ready, history) are closed.
 */
import { entities } from '../indices/entities.ts';
import { sources } from '../indices/provenance.ts';
import { KILLMAIL_LABELS } from '../indices/killmail-labels.ts';
import { chainObjects, events, killmails } from '../indices/timeline.ts';
import { DETAIL_KILLS } from '../query/battles.ts';

export type JsonSchema = { readonly [keyword: string]: unknown };

const text = (description?: string): JsonSchema => ({ type: 'string', ...(description && { description }) });
const time = (description?: string): JsonSchema => ({ type: 'string', format: 'date-time', ...(description && { description }) });
const integer = (description?: string): JsonSchema => ({ type: 'integer', ...(description && { description }) });
const texts = (description?: string): JsonSchema => ({ type: 'array', items: { type: 'string' }, ...(description && { description }) });
const anyJson = (description: string): JsonSchema => ({ description });
const nullable = (type: string): JsonSchema => ({ type: [type, 'null'] });

/** An exported row: open, with the fields the format names. */
const record = (description: string, properties: Record<string, JsonSchema>, required: readonly string[] = []): JsonSchema => ({
  type: 'object',
  description,
  properties,
  ...(required.length && { required: [...required] }),
});

/** A shape of the gateway's own: every field always present, nothing else. */
const closed = (properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

/** A load of a bundle that went live here (src/indices/bundles.ts). */
const BUNDLE_FIELDS = {
  bundleId: text('The bundle: the SHA-256 of its `manifest.json` (or its publish pointer\'s `bundleId`); `bundle=` on any read route pins the answer to it while it is kept.'),
  generation: text('The index generation it was loaded as.'),
  generatedAt: { type: ['string', 'null'], format: 'date-time', description: "Its manifest's `generatedAt`." },
  publishedAt: { type: ['string', 'null'], format: 'date-time', description: "When the registry published it (its publish pointer's `publishedAt`), if it said." },
  loadedAt: time('When this gateway\'s loader made it live.'),
  counts: { type: 'object', additionalProperties: { type: 'integer' }, description: 'Documents per index once loaded.' },
  live: { type: 'boolean', description: 'It is the live bundle.' },
  queryable: { type: 'boolean', description: 'Its generation is kept: `bundle=` answers from it (KEEP_GENERATIONS keeps the newest loads).' },
};

const CONFIDENCE = text('`verified`, `probable`, `reported`, `stale` or `unknown`.');
const REVIEW_STATUS = text('`candidate`, `reviewed`, `published`, `rejected` or `superseded`.');
const CYCLE = { type: 'integer', minimum: 1, description: 'Absent = uncycled.' };
const ENVIRONMENT = text('`stillness`, `utopia`, `unknown` (or another tenant).');

const ENTITY_FIELDS = {
  id: text('`<entityType>:<tenant>:<token>`.'),
  slug: text('URL-safe alias; `{idOrSlug}` resolves either.'),
  entityType: text('One of the format\'s 25 entity types (`character`, `tribe`, `system`, `enemy`, …).'),
  name: text('Canonical name; placeholders look like `Character 2112…`.'),
  displayName: text('Preferred label.'),
  summary: text(),
  environment: ENVIRONMENT,
  cycle: CYCLE,
  updatedAt: time(),
};

const SOURCE_FIELDS = {
  id: text('`source:…`.'),
  kind: text('Source kind (`onchain`, `chain_event`, `chain_object`, `world_api`, `static_client_data`, …).'),
  title: text(),
  locator: text('Endpoint, path or label.'),
  url: text(),
  environment: ENVIRONMENT,
  cycle: CYCLE,
  metadata: { type: 'object', description: 'Free object; keys vary per source.' },
  createdAt: time(),
};

const RELATION_FIELDS = {
  subjectEntityId: text(),
  predicate: text('Open set: `belongs_to`, `owned_by`, `located_in`, `links_to`, `killer`, …'),
  objectEntityId: text(),
  sourceId: text(),
  confidence: CONFIDENCE,
  environment: ENVIRONMENT,
};

const CURRENT_RELATION_FIELDS = {
  id: text('`relation:<subject>:<predicate>:<object>:<sourceId>`.'),
  ...RELATION_FIELDS,
  subjectEntityType: text(),
  subjectDisplayName: text(),
  objectEntityType: text(),
  objectDisplayName: text(),
  createdAt: time(),
};

const RESOLVED_VALUE = record('A resolved actor or system (`entityType: unknown`, `displayName: Unknown` when unresolved).', {
  entityId: text(),
  entityType: text(),
  rawId: text('The unresolved input.'),
  displayName: text(),
  typeId: text('Static type id of an NPC killer.'),
  isNpc: { type: 'boolean' },
  confidence: CONFIDENCE,
  sourceIds: texts(),
  warnings: texts(),
});

const COUNTED = { type: 'array', items: closed({ id: text(), count: integer() }) };
/** One side of an activity: the killmails it counts, and what they hold. */
const NAMED = (what: string): JsonSchema => ({ type: 'array', items: { type: 'object', properties: { id: text(), name: text() }, required: ['id'], additionalProperties: false }, description: what });
const BATTLE_SIDE: JsonSchema = {
  type: 'object',
  properties: {
    side: { type: 'string', enum: ['a', 'b', 'npc'] },
    tribes: NAMED('Tribes of the side, by id.'),
    characters: NAMED('Characters of the side, by id.'),
    kills: integer('Killmails a killer of the side made.'),
    losses: integer('Killmails whose victim is of the side.'),
  },
  required: ['side', 'tribes', 'characters', 'kills', 'losses'],
  additionalProperties: false,
};

const ACTIVITY_SIDE: JsonSchema = {
  type: 'object',
  properties: {
    count: integer(),
    npc: integer('Of them, killed by an NPC.'),
    lossTypes: { type: 'array', items: closed({ lossType: text(), count: integer() }) },
    grid: { type: 'array', minItems: 7, maxItems: 7, items: { type: 'array', minItems: 24, maxItems: 24, items: { type: 'integer' } }, description: '`[weekday][hour]`, UTC, Monday first.' },
    systems: COUNTED,
    opponents: { ...COUNTED, description: 'Kills: the victims (a tribe: their tribes); losses: the killers (their tribes).' },
    killers: COUNTED,
    victims: COUNTED,
    killerTribes: COUNTED,
    victimTribes: COUNTED,
  },
  required: ['count', 'npc', 'lossTypes', 'grid'],
  additionalProperties: false,
};

const KILLMAIL_RAW_FIELDS = {
  id: text('`killmail:<tenant>:<itemId>`.'),
  environment: ENVIRONMENT,
  occurredAt: time(),
  systemId: text(),
  systemName: text(),
  victimCharacterId: text(),
  victimName: text(),
  killerCharacterId: text(),
  killerName: text(),
  killerTypeId: text('Numeric static type id; present = NPC killer.'),
  reporterCharacterId: text(),
  reporterName: text(),
  lossType: text(),
  sourceIds: texts(),
  raw: anyJson('The chain record as reported (`sourceEventId`, `event`); left out of list rows.'),
};

/** Every named schema of the document (`components.schemas`). */
export const SCHEMAS = {
  Entity: record('An entities.jsonl row.', ENTITY_FIELDS, entities.requiredFields),
  Fact: record(
    'A facts.jsonl row.',
    {
      entityId: text(),
      key: text(),
      value: anyJson('Any JSON (string, number, boolean, array, object or null); its type varies per key across rows.'),
      sourceId: text(),
      confidence: CONFIDENCE,
      environment: ENVIRONMENT,
      cycle: CYCLE,
      reviewStatus: REVIEW_STATUS,
      importId: text(),
      publishedAt: time(),
    },
    ['key'],
  ),
  Relation: record('A relations.jsonl row (no id, no cycle).', RELATION_FIELDS, ['subjectEntityId', 'predicate', 'objectEntityId']),
  Source: record('A sources.jsonl row.', SOURCE_FIELDS, sources.requiredFields),
  EntitySource: record('The source object of an entity_sources.jsonl row (shaped like a sources.jsonl row).', SOURCE_FIELDS),
  Artefact: record(
    'A source_artefacts.jsonl row.',
    {
      id: text('`artefact:<sha256>`.'),
      sourceId: text(),
      sourceKind: text(),
      kind: text(),
      artefactKind: text(),
      environment: ENVIRONMENT,
      pathOrUri: text(),
      sha256: text(),
      sizeBytes: integer(),
      rowCount: integer(),
      contentType: text(),
      extractedAt: time(),
      importerName: text(),
      importerVersion: text(),
      clientBuild: text(),
      patchLabel: text(),
      cycle: CYCLE,
      reviewStatus: REVIEW_STATUS,
      supersededByArtefactId: text(),
      notes: text(),
      createdAt: time(),
    },
    ['id'],
  ),
  Event: record(
    'An events.jsonl row.',
    {
      id: text('`event:<txDigest>:<seq>`.'),
      kind: text('`<module>.<event>`, e.g. `character.created`.'),
      environment: ENVIRONMENT,
      occurredAt: time(),
      cycle: CYCLE,
      packageId: text(),
      module: text(),
      transactionDigest: text(),
      checkpoint: text(),
      sourceId: text(),
      payload: anyJson('The raw chain event (`json`, `moveType`, …).'),
    },
    events.requiredFields,
  ),
  ChainObject: record(
    'A chain_objects.jsonl row.',
    {
      id: text('`object:<objectId>:<version>`.'),
      objectId: text(),
      environment: ENVIRONMENT,
      typeRepr: text('`<pkg>::<module>::<Type>`.'),
      packageId: text(),
      module: text(),
      typeName: text(),
      version: text(),
      digest: text(),
      sourceId: text(),
      cycle: CYCLE,
      observedAt: time(),
      payload: anyJson('The raw chain object (`json`, `moveType`, …).'),
    },
    chainObjects.requiredFields,
  ),
  Resolved: closed({
    type: { type: 'string', enum: ['entity', 'killmail', 'event', 'source', 'artefact', 'chain_object'] },
    id: text('The record\'s id.'),
    href: text('The record\'s route.'),
    matched: text('The field the value was found in: `id`, `slug`, `address` (an `*_address` fact of the entity), `transactionDigest`, `sha256` or `objectId`.'),
  }),
  Activity: {
    type: 'object',
    description: "A character's or tribe's `kills` and `losses`, or a system's `killmails`, and the first and last killmail's instant (null without any).",
    properties: {
      entity: closed({ id: text(), entityType: { type: 'string', enum: ['character', 'tribe', 'system'] } }),
      exact: { type: 'boolean', description: 'Every count and list is exact, on any number of shards; `false` only where a list has more distinct values than one read covers.' },
      first: nullable('string'),
      last: nullable('string'),
      kills: ACTIVITY_SIDE,
      losses: ACTIVITY_SIDE,
      killmails: ACTIVITY_SIDE,
    },
    required: ['entity', 'exact', 'first', 'last'],
    additionalProperties: false,
  },
  Tombstone: {
    type: 'object',
    description: 'A row that left the registry (`include=removed`): its id and the instant of the load that removed it.',
    properties: { id: text(), removed: { const: true }, removedAt: time() },
    required: ['id', 'removed', 'removedAt'],
    additionalProperties: false,
  },
  ResolvedValue: RESOLVED_VALUE,
  Battle: {
    type: 'object',
    description: 'Killmails of one system, each within `gap` minutes of the one before, two at least (README: battles).',
    properties: {
      id: text("Its first killmail's id."),
      environment: ENVIRONMENT,
      systemId: text(),
      systemName: text(),
      cycle: CYCLE,
      gap: integer('Minutes.'),
      startedAt: time(),
      endedAt: time(),
      killCount: integer(),
      sides: { type: 'array', items: BATTLE_SIDE },
      href: text("The battle's route."),
    },
    required: ['id', 'environment', 'systemId', 'gap', 'startedAt', 'endedAt', 'killCount', 'sides', 'href'],
    additionalProperties: false,
  },
  BattleDetail: {
    type: 'object',
    description: `A battle with its killmails, oldest first (at most ${DETAIL_KILLS}; \`killmailsTruncated\` when it has more: \`killmailsHref\` lists them all).`,
    properties: {
      battle: { $ref: '#/components/schemas/Battle' },
      killmails: { type: 'array', items: { $ref: '#/components/schemas/Killmail' } },
      killmailsTruncated: { type: 'boolean' },
      killmailsHref: text('The killmails list of its system and time.'),
    },
    required: ['battle', 'killmails', 'killmailsTruncated', 'killmailsHref'],
    additionalProperties: false,
  },
  Killmail: record(
    'A killmails.jsonl row, names and unresolved actors filled from entity records.',
    {
      ...KILLMAIL_RAW_FIELDS,
      kind: text('Always `killmail`.'),
      system: { $ref: '#/components/schemas/ResolvedValue' },
      victim: { $ref: '#/components/schemas/ResolvedValue' },
      killer: { $ref: '#/components/schemas/ResolvedValue' },
      reporter: { $ref: '#/components/schemas/ResolvedValue' },
      summaryText: text(),
      sources: texts(),
      warnings: texts(),
      labels: {
        type: 'array',
        items: { type: 'string', enum: [...KILLMAIL_LABELS] },
        description:
          '`npc`: the killer is an NPC; `structure`: the loss is not a ship; `same_tribe`: the victim and a killer belong to one tribe; `unresolved`: the export did not resolve the victim or the killer.',
      },
      proof: {
        type: 'object',
        description: "The killmail's chain event, when the export names one.",
        properties: { eventId: text('`raw.sourceEventId`.'), href: text('The event\'s route.'), transactionDigest: text('From the event id.') },
        required: ['eventId', 'href'],
      },
    },
    killmails.requiredFields,
  ),
  KillmailRaw: record('A killmail as reported: the row without the derived fields.', KILLMAIL_RAW_FIELDS, killmails.requiredFields),
  CurrentEntity: record(
    'A current_entities.jsonl row.',
    {
      entity: record('The entity row.', ENTITY_FIELDS, ['id']),
      facts: { type: ['object', 'array'], description: 'Latest value per fact key (older exports: an array of facts).' },
      outgoingRelations: { type: 'array', items: { $ref: '#/components/schemas/CurrentRelation' } },
      incomingRelations: { type: 'array', items: { $ref: '#/components/schemas/CurrentRelation' } },
      sourceIds: texts(),
      derived: { type: 'object', description: '`profile`, `tribe`, `owner`, `system`, … and counters.' },
    },
    ['entity'],
  ),
  CurrentRelation: record('A current_relations.jsonl row.', CURRENT_RELATION_FIELDS, ['subjectEntityId', 'predicate', 'objectEntityId']),
  Freshness: record(
    'An ops_freshness.json row, plus its age now.',
    {
      source: text(),
      environment: ENVIRONMENT,
      lastSuccessfulIngest: time(),
      eventsProcessed: integer(),
      errorCount: integer(),
      stalenessStatus: text('As exported (frozen when the bundle was written).'),
      updatedAt: time(),
      ageSeconds: { type: ['integer', 'null'], minimum: 0, description: 'Seconds since `lastSuccessfulIngest`, now; null without one.' },
      stalenessNow: text('`stalenessStatus` recomputed now with the registry\'s 15-minute rule.'),
    },
    ['ageSeconds', 'stalenessNow'],
  ),
  Cursor: record('An ops_cursors.json row.', {
    id: text(),
    source: text(),
    environment: ENVIRONMENT,
    cursorValue: text('Opaque.'),
    cursorKind: text(),
    eventsProcessed: integer(),
    errorCount: integer(),
    updatedAt: time(),
  }),
  ChainCoverage: record('The ops_chain_coverage.json document.', {
    environment: ENVIRONMENT,
    network: text(),
    coverageBasis: text(),
    fullCoverageProven: { type: 'boolean' },
    targetCount: integer(),
    rowsProcessed: integer(),
    targets: { type: ['array', 'null'], items: { type: 'object' } },
    warnings: { type: ['array', 'null'] },
  }),
  SourceGap: record('An ops_source_gaps.json row.', {
    id: text('`source-gap:<env>:<kind>`.'),
    kind: text(),
    category: text(),
    severity: text('`actionable`, `info` or `none`.'),
    environment: ENVIRONMENT,
    count: integer(),
    summary: text(),
    recommendedAction: text(),
    suggestedCommands: texts(),
  }),
  History: closed({
    entity: { $ref: '#/components/schemas/Entity' },
    facts: { type: 'array', items: { $ref: '#/components/schemas/Fact' } },
    relations: { type: 'array', items: { $ref: '#/components/schemas/Relation' } },
    sources: { type: 'array', items: { $ref: '#/components/schemas/EntitySource' } },
    truncated: closed({ facts: { type: 'boolean' }, relations: { type: 'boolean' }, sources: { type: 'boolean' } }),
  }),
  Health: closed({ status: { const: 'ok' }, time: time() }),
  Root: closed({
    name: text(),
    version: { const: 'v1' },
    source: text(),
    defaultEnvironment: text(),
    currentCycle: nullable('integer'),
    generation: nullable('string'),
    bundleId: nullable('string'),
    generatedAt: nullable('string'),
    endpoints: texts('Every route, `{param}` for path parameters.'),
  }),
  Bundle: closed(BUNDLE_FIELDS),
  Membership: closed({
    characterId: text('The character (entity id).'),
    tribeId: text('The tribe (entity id).'),
    change: { enum: ['joined', 'left'] },
  }),
  Change: {
    type: 'object',
    properties: {
      collection: text('The index the row belongs to, as `collection=` names it (`entities`, `facts`, `relations`, …).'),
      id: text("The row's id (facts: `<entityId>:<key>:<sourceId>`; relations: their key)."),
      change: { enum: ['added', 'changed', 'removed'] },
      before: { type: ['object', 'null'], description: 'The row as `from` held it (`changed`, `removed`): its exported line.' },
      after: { type: ['object', 'null'], description: 'The row as `to` holds it (`added`, `changed`): its exported line.' },
    },
    required: ['collection', 'id', 'change'],
    additionalProperties: false,
  },
  BundleDetail: closed({
    ...BUNDLE_FIELDS,
    manifest: { type: 'object', description: "The bundle's `manifest.json`." },
    catalog: { type: 'object', description: "The bundle's `catalog.json`." },
    ops: { type: ['object', 'null'], description: 'The four `ops_*.json` documents by name (`freshness`, `cursors`, `chainCoverage`, `sourceGaps`), while the bundle is kept; `null` after.' },
  }),
  Ready: closed({
    status: { enum: ['ready', 'degraded'] },
    manifest: { type: 'boolean', description: 'A generation is live.' },
    generation: nullable('string'),
    bundleId: nullable('string'),
    generatedAt: nullable('string'),
    publishedAt: nullable('string'),
    loadedAt: nullable('string'),
    indexedThrough: nullable('string'),
    cluster: text('Elasticsearch cluster health.'),
  }),
} satisfies Record<string, JsonSchema>;

export type SchemaName = keyof typeof SCHEMAS;

/** The top-level fields a record schema names (what `select` can keep, and a CSV's columns without it). */
export function fieldsOf(...names: SchemaName[]): string[] {
  return [...new Set(names.flatMap((name) => Object.keys((SCHEMAS[name] as { properties: object }).properties)))];
}

/** A reference to a named schema. */
export function ref(name: SchemaName): JsonSchema {
  return { $ref: `#/components/schemas/${name}` };
}
