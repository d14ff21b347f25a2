/**
 * catalog.json and manifest.json, and what they say about each file: the file order, content
 * types, high-water marks (cursor order label, first/last row key and time) and the database
 * block. Pure builders; write-bundle.ts writes the bytes.
 */
import type { Context } from './context.ts';
import { compareBytes } from './go-json.ts';
import type { ManifestFile } from '../loader/bundle.ts';
import type { RowFileResult } from './row-file.ts';

export const REGISTRY = 'black-relay-registry';
export const API_VERSION = 'v1';
export const MANIFEST_SCHEMA = 'registry.export_manifest.v1';
export const CATALOG_SCHEMA = 'registry.export.v1';

/** The JSONL collections in manifest order (events and chain objects only when included). */
export const JSONL_COLLECTIONS = [
  'entities', 'killmails', 'sources', 'facts', 'relations', 'entity_sources', 'source_artefacts',
  'current_entities', 'current_relations', 'events', 'chain_objects',
] as const;
export type Collection = (typeof JSONL_COLLECTIONS)[number];

export const OPS_DOCUMENTS = ['ops_freshness.json', 'ops_cursors.json', 'ops_chain_coverage.json', 'ops_source_gaps.json'] as const;

/** The `cursorOrder` label of each collection (export-format.md section 2). */
export const CURSOR_ORDER: Record<Collection, string> = {
  entities: 'updated_at DESC, id DESC',
  killmails: 'occurred_at DESC, id DESC',
  events: 'occurred_at DESC, id DESC',
  sources: 'created_at DESC, id DESC',
  source_artefacts: 'created_at DESC, id DESC',
  facts: 'entity_id ASC, key ASC, source_id ASC',
  relations: 'subject_entity_id ASC, predicate ASC, object_entity_id ASC, source_id ASC',
  entity_sources: 'entity_id ASC, source_id ASC',
  current_entities: 'type ASC, display_name ASC, entity_id ASC',
  current_relations: 'predicate ASC, subject_entity_id ASC, object_entity_id ASC',
  chain_objects: 'observed_at ASC, id ASC',
};

const SCHEMA_VERSIONS = [
  '0001_init', '0002_snapshots_jsonl', '0003_sources_artefacts', '0004_facts_review', '0005_relations',
  '0006_killmails', '0007_chain_events', '0008_chain_objects', '0009_cursors', '0010_cycles',
  '0011_current_views', '0012_source_gaps', '0013_strip_old_cycles', '0014_normalise_inventory_v2_event_kinds',
];

/** A high-water mark object, fields in struct order. */
export function highWaterMark(collection: Collection, result: RowFileResult): Record<string, unknown> {
  const mark: Record<string, unknown> = {
    rowCount: result.entry.rowCount,
    complete: true,
    cursorOrder: CURSOR_ORDER[collection],
  };
  if (result.first) {
    mark.firstId = result.first.id;
    if (result.first.time !== undefined) mark.firstTime = result.first.time;
  }
  if (result.last) {
    mark.lastId = result.last.id;
    if (result.last.time !== undefined) mark.lastTime = result.last.time;
  }
  return mark;
}

/** The header catalog.json and manifest.json share, after their schemaVersion. */
function sharedHeader(ctx: Context): Record<string, unknown> {
  return { registry: REGISTRY, apiVersion: API_VERSION, generatedAt: ctx.generatedAt, cycleScope: 'current', cycles: [6], includeUncycled: true };
}

/** catalog.json; counts equal the manifest row counts. */
export function catalogDocument(ctx: Context, counts: Partial<Record<Collection, number>>, dataFiles: readonly string[]): Record<string, unknown> {
  const catalog: Record<string, unknown> = {
    schemaVersion: CATALOG_SCHEMA,
    ...sharedHeader(ctx),
    entityCount: counts.entities ?? 0,
    killmailCount: counts.killmails ?? 0,
    sourceCount: counts.sources ?? 0,
    factCount: counts.facts ?? 0,
    relationCount: counts.relations ?? 0,
    artefactCount: counts.source_artefacts ?? 0,
  };
  if (counts.events) catalog.eventCount = counts.events;
  if (counts.chain_objects) catalog.chainObjectCount = counts.chain_objects;
  catalog.files = ['catalog.json', 'manifest.json', ...dataFiles];
  return catalog;
}

/** manifest.json; `files` must already be in manifest order (catalog first). */
export function manifestDocument(
  ctx: Context, databaseLabel: string, files: readonly ManifestFile[], marks: Record<string, Record<string, unknown>>,
): Record<string, unknown> {
  return {
    schemaVersion: MANIFEST_SCHEMA,
    ...sharedHeader(ctx),
    database: {
      engine: 'postgresql',
      database: databaseLabel,
      serverVersion: 'PostgreSQL 16.4 (Debian 16.4-1.pgdg120+2) on x86_64-pc-linux-gnu, compiled by gcc (Debian 12.2.0-14) 12.2.0, 64-bit',
      schemaVersions: SCHEMA_VERSIONS,
    },
    files: files.map((file) => ({ ...file })),
    // A Go map (keys sorted) of structs (fields in declaration order): sort the top level only.
    highWaterMarks: Object.fromEntries(Object.keys(marks).sort(compareBytes).map((key) => [key, marks[key]])),
  };
}
