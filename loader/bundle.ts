/**
 * Opens a bundle wherever it is published (a directory, `s3://bucket/prefix`, an `http(s)://`
 * folder; source.ts reads them): follows a publish pointer, reads and checks `manifest.json`,
 * and finds each listed file as published (plain, or only its `.jsonl.gz` twin).
 *
 * It checks what the registry's verifier checks of the manifest itself (schema version,
 * safe bare file names, content types, no duplicates) and that every listed file exists (a HEAD
 * per file on a store, before anything loads). File contents are checked while they stream
 * (see load-file.ts); each file is read as the version found here (its ETag is a precondition).
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { StoreError } from '../src/store/errors.ts';
import type { ObjectStore } from '../src/store/object-store.ts';
import { LoadError } from './errors.ts';
import { type Folder, type StoredFile, asLoadError, findManifest, openFolder } from './source.ts';

export const MANIFEST_SCHEMA = 'registry.export_manifest.v1';
export const POINTER_SCHEMA = 'registry.export_publish_pointer.v1';

/** A manifest `files[]` entry (the one declaration: the generator writes and reads these too). */
export interface ManifestFile {
  path: string;
  contentType: string;
  sha256: string;
  sizeBytes: number;
  rowCount: number;
}

export interface Manifest {
  schemaVersion: string;
  registry?: string;
  generatedAt?: string;
  cycles?: number[];
  files: ManifestFile[];
  /** Each source's cursor at export time, by file stem (the loader does not read them). */
  highWaterMarks?: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

/** A listed file, where it is, and its stored bytes. */
export interface BundleFile extends ManifestFile {
  /** The bytes are the `.jsonl.gz` twin. */
  gzip: boolean;
  /** The path or store URL read (for messages; never a credential). */
  location: string;
  /** Bytes as stored (the `.gz` size for a twin) and the store's ETag, when the source said. */
  stored: StoredFile;
  /** The stored bytes; retried and resumed inside for a store. */
  open(options?: { signal?: AbortSignal }): AsyncIterable<Buffer>;
}

export interface Bundle {
  /** What the operator named. */
  source: string;
  /** The pointer's bundle id, else the sha256 of the manifest bytes (the registry's default id). */
  bundleId: string;
  manifestSha256: string;
  /** The exact bytes of `manifest.json`, kept for the generation's export copy. */
  manifestBytes: Buffer;
  /** The store's ETag of `manifest.json` (remote bundles: /v1/exports reads it back under this precondition). */
  manifestEtag?: string;
  manifest: Manifest;
  files: Map<string, BundleFile>;
  /** The pointer's `publishedAt`, when a publish pointer led here. */
  publishedAt?: string;
  /** The bundle directory, when the source is local (the loader copies its files for /v1/exports). */
  local?: string;
  /** The store folder of the bundle (`s3://bucket/prefix/bundles/<id>/`, `https://…/`), when remote. */
  exportBase?: string;
}

export interface OpenOptions {
  store: ObjectStore;
  signal?: AbortSignal;
  /** Resolves a relative directory (default: the process's working directory). */
  cwd?: string;
}

function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new LoadError(`not valid JSON (${(error as Error).message})`, { file });
  }
}
function checkEntry(entry: unknown, seen: Set<string>): ManifestFile {
  const e = (entry ?? {}) as Partial<ManifestFile>;
  const name = e.path;
  if (typeof name !== 'string' || name === '' || name !== path.basename(name) || name.includes('\\') || name.includes('..')) {
    throw new LoadError(`manifest lists an unsafe or empty path ${JSON.stringify(name)}`, { file: 'manifest.json' });
  }
  if (seen.has(name)) throw new LoadError(`manifest lists "${name}" twice`, { file: 'manifest.json' });
  seen.add(name);
  const expectedType = name.endsWith('.jsonl') ? 'application/x-ndjson' : 'application/json';
  if (e.contentType !== expectedType) {
    throw new LoadError(`"${name}" must have contentType ${expectedType}`, { file: 'manifest.json' });
  }
  if (typeof e.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(e.sha256)) {
    throw new LoadError(`"${name}" has no valid sha256`, { file: 'manifest.json' });
  }
  for (const field of ['sizeBytes', 'rowCount'] as const) {
    if (!Number.isSafeInteger(e[field]) || (e[field] as number) < 0) {
      throw new LoadError(`"${name}" has no valid ${field}`, { file: 'manifest.json' });
    }
  }
  return e as ManifestFile;
}

/** What a publish pointer leads to: the bundle's folder, its manifest bytes and their store version. */
interface Pointed {
  folder: Folder;
  bundleId: string;
  bytes: Buffer;
  etag?: string;
  publishedAt?: string;
}

/** Follows a `latest/` publish pointer to `../bundles/<bundleId>/`, checking the manifest hash it names. */
async function followPointer(latest: Folder, pointer: Record<string, unknown>, signal?: AbortSignal): Promise<Pointed> {
  const { bundleId, manifestKey, manifestSha256, publishedAt } = pointer;
  if (typeof bundleId !== 'string' || !/^[^/\\]+$/.test(bundleId) || bundleId.includes('..')) {
    throw new LoadError('publish pointer has no valid bundleId', { file: 'manifest.json' });
  }
  if (typeof manifestKey !== 'string' || !manifestKey.endsWith(`bundles/${bundleId}/manifest.json`)) {
    throw new LoadError('publish pointer manifestKey does not name bundles/<bundleId>/manifest.json', { file: 'manifest.json' });
  }
  const folder = latest.resolve('../bundles/').sub(bundleId);
  const read = await folder.read('manifest.json', { signal });
  if (read.status !== 'ok') {
    throw new LoadError(`publish pointer names a bundle that is not here: ${folder.kind === 'dir' ? folder.where : folder.locate('manifest.json')}`, { file: 'manifest.json' });
  }
  if (createHash('sha256').update(read.bytes).digest('hex') !== manifestSha256) {
    throw new LoadError(`manifest of bundle ${bundleId} does not match the pointer's manifestSha256`, { file: 'manifest.json' });
  }
  return { folder, bundleId, bytes: read.bytes, etag: read.version.etag, publishedAt: typeof publishedAt === 'string' ? publishedAt : undefined };
}

/**
 * Where a listed file is: plain, else (for `.jsonl`) its `.gz` twin; undefined when neither is
 * there. S3 answers a missing key with 403 to a key without s3:ListBucket, so a 403 for the
 * plain file stands only when the twin is not there either.
 */
async function findFile(folder: Folder, entry: ManifestFile, signal?: AbortSignal): Promise<BundleFile | undefined> {
  let refused: unknown;
  for (const gzip of entry.path.endsWith('.jsonl') ? [false, true] : [false]) {
    const name = gzip ? `${entry.path}.gz` : entry.path;
    const stored = await folder.stat(name, { signal }).catch((error: unknown) => {
      if (gzip || !(error instanceof StoreError && error.status === 403)) throw error;
      refused = error;
      return undefined;
    });
    if (stored) return { ...entry, gzip, location: folder.locate(name), stored, open: (options) => folder.open(name, stored, { signal, ...options }) };
  }
  if (refused) throw refused;
  return undefined;
}

/**
 * Opens the bundle `source` names: a bundle folder, a `latest/` folder (publish pointer or flat
 * manifest), or a publication prefix holding `latest/` — a directory, `s3://…` or `http(s)://…`.
 */
export async function openBundle(source: string, options: OpenOptions): Promise<Bundle> {
  try {
    return await open(source, options);
  } catch (error) {
    throw asLoadError(error);
  }
}

async function open(source: string, { store, signal, cwd }: OpenOptions): Promise<Bundle> {
  const root = openFolder(source, store, cwd);
  if (root.kind === 'dir' && !(await dirExists(root.where))) throw new LoadError(`bundle directory not found: ${root.where}`);
  const found = await findManifest(root, { signal });
  if (found.read.status !== 'ok') {
    throw new LoadError(`no manifest.json in ${root.where} (nor in ${found.folder.where})`, { file: 'manifest.json' });
  }
  let { folder } = found;
  let bytes = found.read.bytes;
  let etag = found.read.version.etag;
  let pointed: Pointed | undefined;
  let manifest = parseJson(bytes.toString('utf8'), 'manifest.json') as Record<string, unknown>;
  if (manifest?.schemaVersion === POINTER_SCHEMA) {
    pointed = await followPointer(folder, manifest, signal);
    ({ folder, bytes, etag } = pointed);
    manifest = parseJson(bytes.toString('utf8'), 'manifest.json') as Record<string, unknown>;
  }
  if (manifest?.schemaVersion !== MANIFEST_SCHEMA) {
    throw new LoadError(`schemaVersion must be ${MANIFEST_SCHEMA}, got ${JSON.stringify(manifest?.schemaVersion)}`, {
      file: 'manifest.json',
    });
  }
  if (!Array.isArray(manifest.files)) throw new LoadError('manifest has no files[]', { file: 'manifest.json' });
  const seen = new Set<string>();
  const entries = manifest.files.map((e) => checkEntry(e, seen));
  // Every file is looked for before anything loads (a HEAD each on a store, side by side); the
  // first one missing in manifest order is reported, whatever answered first.
  const located = await Promise.allSettled(entries.map((entry) => findFile(folder, entry, signal)));
  const files = new Map<string, BundleFile>();
  entries.forEach((entry, i) => {
    const result = located[i]!;
    if (result.status === 'rejected') throw result.reason;
    if (!result.value) throw new LoadError('listed in the manifest but missing (neither the file nor its .gz twin is there)', { file: entry.path });
    files.set(entry.path, result.value);
  });
  const manifestSha256 = createHash('sha256').update(bytes).digest('hex');
  return {
    source,
    bundleId: pointed?.bundleId ?? manifestSha256,
    manifestSha256,
    manifestBytes: bytes,
    manifestEtag: etag,
    manifest: manifest as Manifest,
    files,
    publishedAt: pointed?.publishedAt,
    ...(folder.kind === 'dir' ? { local: folder.where } : { exportBase: folder.where }),
  };
}

async function dirExists(dir: string): Promise<boolean> {
  return stat(dir).then((s) => s.isDirectory(), () => false);
}
