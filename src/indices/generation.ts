/**
 * Generations: every load makes a new generation — a generation document in
 * `<prefix>-meta-<generation>` and, for each row-fed index, a concrete index: one built by this
 * load (`<prefix>-<index>-<generation>`), or one an earlier generation built from the same file
 * (reused as it is), named after the generation that built it. The document maps each index to
 * its concrete name. Aliases `<prefix>-<index>` and `<prefix>-meta` point at the live
 * generation's indices and move together in one `updateAliases` call.
 */
import mapping from '../../mappings/meta.json' with { type: 'json' };
import type { MappingFile } from './description.ts';
import type { OpsDocumentName } from './all.ts';

export const META_INDEX = 'meta';
export const META_MAPPING = mapping as MappingFile;

/** Generation ids sort by load time: `<yyyymmddhhmmssSSS>-<first 8 hex of the manifest sha256>`. */
export const GENERATION_PATTERN = /^\d{17}-[0-9a-f]{8}$/;

export function newGenerationId(manifestSha256: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/\D/g, '').slice(0, 17);
  return `${stamp}-${manifestSha256.slice(0, 8)}`;
}

export function aliasName(prefix: string, index: string): string {
  return `${prefix}-${index}`;
}

export function indexName(prefix: string, index: string, generation: string): string {
  return `${prefix}-${index}-${generation}`;
}

/** Splits a concrete index name of this prefix into index and generation, if it is one. */
export function parseIndexName(prefix: string, name: string): { index: string; generation: string } | undefined {
  if (!name.startsWith(`${prefix}-`)) return undefined;
  const rest = name.slice(prefix.length + 1);
  const at = rest.length - 27; // "-" + 17 digits + "-" + 8 hex
  const generation = rest.slice(at + 1);
  if (at < 1 || rest[at] !== '-' || !GENERATION_PATTERN.test(generation)) return undefined;
  return { index: rest.slice(0, at), generation };
}

/** The concrete index a generation reads for `index`. */
export function concreteIndex(prefix: string, generation: Pick<GenerationDoc, 'generation' | 'indices'>, index: string): string {
  return generation.indices?.[index] ?? indexName(prefix, index, generation.generation);
}

/** One bundle file as the generation stored it. */
export interface GenerationFile {
  path: string;
  /** The name it is stored under (`x.jsonl.gz` when only the gzip twin was published). */
  storedAs: string;
  contentType: string;
  sha256: string;
  sizeBytes: number;
  rowCount: number;
  /** Bytes as stored, for a generation served from a store (`exportBase`): the `.gz` size of a twin. */
  storedBytes?: number;
  /** The store's ETag of the stored object: /v1/exports reads it under `If-Match`, so a changed object is never served. */
  etag?: string;
}

/** The generation document: what was loaded, from which bundle, and the bundle's own documents. */
export interface GenerationDoc {
  generation: string;
  bundleId: string;
  manifestSha256: string;
  /**
   * Index name → the concrete index this generation reads (built by it, or reused from the
   * generation that built it). Absent in documents written before indices were reused: then
   * every index is `<prefix>-<index>-<generation>`.
   */
  indices?: Record<string, string>;
  /** Index name → its changes index (src/indices/changes.ts): rows that left or changed, for `include=removed` and 410s. */
  changes?: Record<string, string>;
  /** Index name → what its documents were built from (see loader/plan.ts): equal keys, equal documents. */
  contentKeys?: Record<string, string>;
  /**
   * Indices whose rows this generation keeps as doc values (`rowsInDocValues`); the others keep
   * them in `_source`. Read per generation, not from the running code's mappings: a gateway
   * upgraded before the next load still reads the generation live as it was written.
   */
  docValueRows?: string[];
  /**
   * The instant this load made rows visible: new events and killmails carry it as `indexedAt`,
   * rows seen by an earlier load keep theirs. Nanosecond UTC text.
   */
  indexedAt?: string;
  /** The load's number, one more than any generation kept before it: the external version base of the rows it wrote. */
  sequence?: number;
  /** When the registry published the bundle (the pointer's `publishedAt`), if it said. */
  publishedAt?: string;
  /** Where the bundle was read from (a directory or URL; never credentials). */
  source?: string;
  /** What the documents were built with (see `indexSchema`): a change means the bundle must be loaded again. */
  schema: string;
  generatedAt?: string;
  loadedAt: string;
  /** The cycle that `cycles=current` and the default scope mean for this generation. */
  currentCycle: number;
  /** Immutable local copy of the bundle's files, served by /v1/exports (a bundle loaded from a directory). */
  exportDir?: string;
  /**
   * The store folder of the bundle's files, served by /v1/exports through the gateway (a bundle
   * loaded from `s3://` or `http(s)://`): `s3://bucket/prefix/bundles/<id>/`, `https://…/`. Never a credential.
   */
  exportBase?: string;
  /** `manifest.json` in `exportBase`: its size and the store's ETag. */
  exportManifest?: { storedBytes: number; etag?: string };
  /** Documents per index after the load. */
  counts: Record<string, number>;
  files: GenerationFile[];
  manifest: Record<string, unknown>;
  catalog: Record<string, unknown>;
  ops: Partial<Record<OpsDocumentName, unknown>>;
  warnings: string[];
}
