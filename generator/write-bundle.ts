/**
 * Writes a complete, deterministic export bundle (export-format.md) into a directory: the JSONL
 * files in the writer's order, streamed row by row, then the ops documents, catalog.json and
 * manifest.json with the exact sha256/size/row count of every uncompressed file.
 *
 * Same options, same bytes: the export instant comes from the seed, gzip is deterministic. Files
 * named in `gzipOnly` exist only as `<name>.jsonl.gz`. The directory is created if needed and
 * previous bundle files in it are removed first (so no stale plain twin survives); other files
 * are left alone.
 *
 * What a loader author must know about the data (details in the row modules):
 * - Duplicate keys, last row wins: facts (characters with type index k % 500 === 3: `metadata_name`
 *   from the chain source twice), relations (killmails with k % 500 === 2: first relation twice,
 *   confidence flipped), entity_sources (those same characters: first source twice, title
 *   `… (refreshed)`). `BundleResult.duplicateRows` counts them. No other file repeats a key.
 * - Unknown field `futureField` on one row of every JSONL file (first entity, first fact, first
 *   relation, entity index 2's entity_sources rows, killmail k=1, the datahub source, one artefact,
 *   current row of the first system, first `links_to` current relation, newest bulk event, one chain object).
 * - Endpoints outside the bundle: owner caps/location hashes (`unknown:<t>:ownercap-…`), missing
 *   tribes, misleading killer ids, far gates; sources outside sources.jsonl
 *   (`source:community:reports:stillness`, an artefact's `source:static-client:universe:liminality`).
 * - Rows in files are in the writer's order: entities/killmails/events/sources/artefacts newest
 *   first (ties by id descending), chain objects oldest first, facts/relations/entity_sources
 *   grouped by entity in entity order, current entities by type list then entity order.
 */
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { createContext, type Context } from './context.ts';
import { chainObjectRows } from './chain-objects.ts';
import { currentEntityRow, currentRelation, hasCurrentRow, linkRelations, type GraphLinks } from './current.ts';
import { entityRow, entitySpec, exportOrder, hasFutureField } from './entities.ts';
import { eventRows } from './events.ts';
import { factRow, factsOf, hasDuplicateFact } from './facts.ts';
import { killmailRow, killmailSpec } from './killmails.ts';
import {
  catalogDocument, highWaterMark, JSONL_COLLECTIONS, manifestDocument, OPS_DOCUMENTS, type Collection,
} from './manifest.ts';
import { coverageDocument, cursorsDocument, emptyStats, freshnessDocument, sourceGapsDocument, type OpsStats } from './ops.ts';
import { sortTies } from './ordering.ts';
import { hasDuplicateRelation, relationRow, relationsAt } from './relations.ts';
import type { ManifestFile } from '../loader/bundle.ts';
import { RowFile, writeJsonDocument, type RowFileResult, type RowMark } from './row-file.ts';
import { artefactRows, embeddedSource, sourceRows } from './sources.ts';
import { CURRENT_TYPES, DEPLOYABLE_TYPES, type EntityType } from './vocabulary.ts';
import { ofType } from './entity-table.ts';

export interface BundleOptions {
  /** Blocks of 100 entities (default 1). Scale 400 gives ~1.1 M rows including events. */
  scale?: number;
  /** Seed of every random draw and of the export instant (default 1). */
  seed?: number;
  /** Collections written only as `.jsonl.gz` (default entities, facts, current_entities, events). */
  gzipOnly?: string[];
  /** Write events.jsonl (default true). */
  includeEvents?: boolean;
  /** Events per entity (default 12, as in the export format); benchmarks raise it for a large events file. */
  eventsPerEntity?: number;
  /** Write chain_objects.jsonl (default true). */
  includeChainObjects?: boolean;
  /** Written as `database.database` in the manifest (default `registry`): changes the bundle id, no row. */
  bundleLabel?: string;
}

export interface BundleResult {
  dir: string;
  manifest: Record<string, unknown>;
  /** Rows per manifest file, keyed by collection name (`entities`, `ops_freshness`, `catalog`, ...). */
  rowCounts: Record<string, number>;
  /** Rows whose key repeats an earlier row of the same file (last row wins), per collection. */
  duplicateRows: Record<string, number>;
}

export const DEFAULT_GZIP_ONLY = ['entities', 'facts', 'current_entities', 'events'] as const;

type Row = Record<string, unknown>;

const MARKS: Record<Collection, (row: Row) => RowMark> = {
  entities: (row) => ({ id: row.id as string, time: row.updatedAt as string }),
  killmails: (row) => ({ id: row.id as string, time: row.occurredAt as string }),
  events: (row) => ({ id: row.id as string, time: row.occurredAt as string }),
  sources: (row) => ({ id: row.id as string, time: row.createdAt as string }),
  source_artefacts: (row) => ({ id: row.id as string, time: row.createdAt as string }),
  facts: (row) => ({ id: `${row.entityId as string}:${row.key as string}:${row.sourceId as string}` }),
  relations: (row) => ({ id: `${row.subjectEntityId as string}:${row.predicate as string}:${row.objectEntityId as string}:${row.sourceId as string}` }),
  entity_sources: (row) => ({ id: `${row.entityId as string}:${(row.source as Row).id as string}` }),
  current_entities: (row) => {
    const entity = row.entity as Row;
    return { id: `${entity.entityType as string}:${entity.id as string}`, time: entity.updatedAt as string };
  },
  current_relations: (row) => ({ id: row.id as string, time: row.createdAt as string }),
  chain_objects: (row) => ({ id: row.id as string, time: row.observedAt as string }),
};

/** Writes a bundle into `dir` and returns its manifest and row counts. */
export async function writeBundle(dir: string, options: BundleOptions = {}): Promise<BundleResult> {
  const {
    scale = 1, seed = 1, gzipOnly = [...DEFAULT_GZIP_ONLY], includeEvents = true, includeChainObjects = true, bundleLabel = 'registry',
    eventsPerEntity = 12,
  } = options;
  const unknownGzip = gzipOnly.map((name) => name.replace(/\.jsonl(\.gz)?$/, '')).filter((name) => !(JSONL_COLLECTIONS as readonly string[]).includes(name));
  if (unknownGzip.length > 0) throw new Error(`gzipOnly names unknown collections: ${unknownGzip.join(', ')}`);
  const gzipped = new Set(gzipOnly.map((name) => name.replace(/\.jsonl(\.gz)?$/, '')));
  const ctx = createContext(seed, scale, eventsPerEntity);
  await prepareDirectory(dir);

  const open = (collection: Collection) => new RowFile(dir, `${collection}.jsonl`, { gzip: gzipped.has(collection), mark: MARKS[collection] });
  const results = new Map<Collection, RowFileResult>();
  const duplicateRows: Record<string, number> = { facts: 0, relations: 0, entity_sources: 0 };
  const stats = emptyStats();
  const order = exportOrder(ctx);

  // 1. entities
  const entities = open('entities');
  for (const i of order) {
    const spec = entitySpec(ctx, i);
    const row = entityRow(spec);
    if (hasFutureField(spec)) row.futureField = { x: 1 };
    await entities.write(row);
  }
  results.set('entities', await entities.close());

  // 2. killmails
  results.set('killmails', await writeKillmails(ctx, open('killmails'), stats));

  // 3. sources
  const sources = open('sources');
  for (const row of sourceRows()) await sources.write(row);
  results.set('sources', await sources.close());

  // 4. facts, relations, entity_sources: one pass over entities in export order.
  const links: GraphLinks = new Map();
  const facts = open('facts');
  const relations = open('relations');
  const entitySources = open('entity_sources');
  for (const i of order) {
    const spec = entitySpec(ctx, i);
    const factList = factsOf(ctx, spec);
    for (const fact of factList) await facts.write(factRow(fact));
    const relationList = relationsAt(ctx, spec);
    for (const relation of relationList) {
      const row = relationRow(relation);
      if (relations.rowCount === 0) row.futureField = { x: 1 };
      await relations.write(row);
    }
    linkRelations(links, i, relationList);
    const sourceIds = [...new Set([...factList.map((f) => f.sourceId), ...relationList.map((r) => r.sourceId)])].sort();
    for (const sourceId of sourceIds) {
      const row: Row = { entityId: spec.id, source: embeddedSource(sourceId) };
      if (spec.index === 2) row.futureField = { x: 1 };
      await entitySources.write(row);
      if (hasDuplicateFact(spec) && sourceId === sourceIds[0]) {
        // Same (entityId, source.id) again with a refreshed title: the later row wins.
        const source = { ...embeddedSource(sourceId), title: `${embeddedSource(sourceId).title as string} (refreshed)` };
        await entitySources.write({ entityId: spec.id, source });
        duplicateRows.entity_sources! += 1;
      }
    }
    if (hasDuplicateFact(spec)) duplicateRows.facts! += 1;
    if (hasDuplicateRelation(spec) && relationList.length > 1) duplicateRows.relations! += 1;
    tally(spec.type, spec.environment, spec.placeholder, relationList, factList.map((f) => f.key), stats);
  }
  results.set('facts', await facts.close());
  results.set('relations', await relations.close());
  results.set('entity_sources', await entitySources.close());

  // 5. source_artefacts
  const artefacts = open('source_artefacts');
  for (const row of artefactRows(ctx)) await artefacts.write(row);
  results.set('source_artefacts', await artefacts.close());

  // 6. current_entities: by type list, then entity export order.
  const byType = new Map<EntityType, number[]>(CURRENT_TYPES.map((type) => [type, []]));
  for (const i of order) byType.get(entitySpec(ctx, i).type)?.push(i);
  const current = open('current_entities');
  for (const type of CURRENT_TYPES) {
    for (const i of byType.get(type)!) {
      const spec = entitySpec(ctx, i);
      if (hasCurrentRow(ctx, spec)) await current.write(currentEntityRow(ctx, spec, links));
    }
  }
  results.set('current_entities', await current.close());

  // 7. current_relations: owned_by first, then links_to / observed_between; both endpoints exported.
  const currentRelations = open('current_relations');
  const deployables = new Set<EntityType>(DEPLOYABLE_TYPES);
  let wroteFuture = false;
  for (const predicates of [['owned_by'], ['links_to', 'observed_between']]) {
    for (const i of order) {
      const spec = entitySpec(ctx, i);
      if (!deployables.has(spec.type) && spec.type !== 'route') continue;
      for (const relation of relationsAt(ctx, spec)) {
        if (!predicates.includes(relation.predicate) || relation.subjectIndex < 0 || relation.objectIndex < 0) continue;
        const row = currentRelation(ctx, relation);
        if (!wroteFuture && relation.predicate === 'links_to') {
          row.futureField = { x: 1 };
          wroteFuture = true;
        }
        await currentRelations.write(row);
      }
    }
  }
  results.set('current_relations', await currentRelations.close());

  // 8. ops documents
  const opsEntries = [
    await writeJsonDocument(dir, OPS_DOCUMENTS[0], freshnessDocument(ctx)),
    await writeJsonDocument(dir, OPS_DOCUMENTS[1], cursorsDocument(ctx)),
    await writeJsonDocument(dir, OPS_DOCUMENTS[2], coverageDocument(ctx)),
    await writeJsonDocument(dir, OPS_DOCUMENTS[3], sourceGapsDocument(stats)),
  ];

  // 9. optional raw files
  if (includeEvents) {
    const events = open('events');
    for (const item of eventRows(ctx)) await events.write(item.row);
    results.set('events', await events.close());
  }
  if (includeChainObjects) {
    const objects = open('chain_objects');
    for (const item of chainObjectRows(ctx)) await objects.write(item.row);
    results.set('chain_objects', await objects.close());
  }

  // 10. catalog, then manifest.
  const main: ManifestFile[] = [];
  const optional: ManifestFile[] = [];
  const counts: Partial<Record<Collection, number>> = {};
  const marks: Record<string, Record<string, unknown>> = {};
  for (const collection of JSONL_COLLECTIONS) {
    const result = results.get(collection);
    if (!result) continue;
    (collection === 'events' || collection === 'chain_objects' ? optional : main).push(result.entry);
    counts[collection] = result.entry.rowCount;
    marks[collection] = highWaterMark(collection, result);
  }
  const dataFiles = [...main, ...opsEntries, ...optional];
  const catalogEntry = await writeJsonDocument(dir, 'catalog.json', catalogDocument(ctx, counts, dataFiles.map((file) => file.path)));
  const files = [catalogEntry, ...dataFiles];
  const manifest = manifestDocument(ctx, bundleLabel, files, marks);
  await writeJsonDocument(dir, 'manifest.json', manifest);

  const rowCounts: Record<string, number> = {};
  for (const file of files) rowCounts[file.path.replace(/\.jsonl$|\.json$/, '')] = file.rowCount;
  return { dir, manifest, rowCounts, duplicateRows };
}

async function writeKillmails(ctx: Context, file: RowFile, stats: OpsStats): Promise<RowFileResult> {
  const count = ofType(ctx.table, 'killmail').length;
  function* timed() {
    for (let k = 0; k < count; k += 1) {
      const spec = killmailSpec(ctx, k);
      if (spec.unresolved !== undefined) stats.unresolvedKillmails[spec.entity.environment] += 1;
      yield { ns: spec.ns, id: spec.entity.id, row: killmailRow(ctx, spec) };
    }
  }
  for (const item of sortTies(timed(), 'desc')) await file.write(item.row);
  return file.close();
}

function tally(
  type: EntityType, environment: keyof OpsStats['recipes'], placeholder: boolean,
  relations: ReturnType<typeof relationsAt>, factKeys: readonly string[], stats: OpsStats,
): void {
  if ((DEPLOYABLE_TYPES as readonly string[]).includes(type)) {
    if (!relations.some((relation) => relation.predicate === 'owned_by')) stats.deployablesWithoutOwner[environment] += 1;
    if (!relations.some((relation) => relation.predicate === 'located_in')) stats.deployablesWithoutLocation[environment] += 1;
  }
  if (type === 'tribe') {
    if (placeholder) stats.placeholderTribes[environment] += 1;
    if (!factKeys.includes('url') && !factKeys.includes('description')) stats.tribesWithoutProfile[environment] += 1;
  }
  if (type === 'recipe' || type === 'blueprint') stats.recipes[environment] += 1;
}

/** Creates `dir` and removes bundle files a previous run may have left there. */
async function prepareDirectory(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const names = [
    'manifest.json', 'catalog.json', ...OPS_DOCUMENTS,
    ...JSONL_COLLECTIONS.flatMap((collection) => [`${collection}.jsonl`, `${collection}.jsonl.gz`]),
  ];
  await Promise.all(names.map((name) => rm(path.join(dir, name), { force: true })));
}

/**
 * The bundle in `dir`, written first when it is not there yet: `npm start`'s sample and the
 * benchmarks' bundles are generated once and reused (same options, same bytes).
 */
export async function ensureBundle(dir: string, options: BundleOptions, log: (line: string) => void = () => {}): Promise<string> {
  if (!existsSync(path.join(dir, 'manifest.json'))) {
    log(`writing a bundle of scale ${options.scale ?? 1} to ${dir}`);
    await writeBundle(dir, options);
  }
  return dir;
}
