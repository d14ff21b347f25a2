/**
 * Opens a bundle directory: follows a publish pointer, reads and checks `manifest.json`,
 * and finds each listed file as published (plain, or only its `.jsonl.gz` twin).
 *
 * It checks what the registry's verifier checks of the manifest itself (schema version,
 * safe bare file names, content types, no duplicates) and that every listed file exists.
 * File contents are checked while they stream (see load-file.ts).
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { LoadError } from './errors.ts';

export const MANIFEST_SCHEMA = 'registry.export_manifest.v1';
export const POINTER_SCHEMA = 'registry.export_publish_pointer.v1';

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
  [key: string]: unknown;
}

/** A listed file and where it is on disk. */
export interface BundleFile extends ManifestFile {
  /** Absolute path of what will be read. */
  location: string;
  gzip: boolean;
}

export interface Bundle {
  dir: string;
  /** The pointer's bundle id, else the sha256 of the manifest bytes (the registry's default id). */
  bundleId: string;
  manifestSha256: string;
  /** The exact bytes of `manifest.json`, kept for the generation's export copy. */
  manifestBytes: Buffer;
  manifest: Manifest;
  files: Map<string, BundleFile>;
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then((s) => s.isFile(), () => false);
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

/** Follows a `latest/` publish pointer to `../bundles/<bundleId>/`, checking the manifest hash it names. */
async function followPointer(dir: string, pointer: Record<string, unknown>): Promise<{ dir: string; bundleId: string }> {
  const { bundleId, manifestKey, manifestSha256 } = pointer;
  if (typeof bundleId !== 'string' || !/^[^/\\]+$/.test(bundleId) || bundleId.includes('..')) {
    throw new LoadError('publish pointer has no valid bundleId', { file: 'manifest.json' });
  }
  if (typeof manifestKey !== 'string' || !manifestKey.endsWith(`bundles/${bundleId}/manifest.json`)) {
    throw new LoadError('publish pointer manifestKey does not name bundles/<bundleId>/manifest.json', { file: 'manifest.json' });
  }
  const target = path.resolve(dir, '..', 'bundles', bundleId);
  const bytes = await readFile(path.join(target, 'manifest.json')).catch(() => {
    throw new LoadError(`publish pointer names a bundle that is not here: ${target}`, { file: 'manifest.json' });
  });
  if (createHash('sha256').update(bytes).digest('hex') !== manifestSha256) {
    throw new LoadError(`manifest of bundle ${bundleId} does not match the pointer's manifestSha256`, { file: 'manifest.json' });
  }
  return { dir: target, bundleId };
}

/** Opens the bundle in `dir` (a bundle, or a `latest/` directory holding a publish pointer). */
export async function openBundle(dir: string): Promise<Bundle> {
  let bundleDir = path.resolve(dir);
  if (!(await stat(bundleDir).then((s) => s.isDirectory(), () => false))) {
    throw new LoadError(`bundle directory not found: ${bundleDir}`);
  }
  let pointedId: string | undefined;
  let bytes = await readFile(path.join(bundleDir, 'manifest.json')).catch(() => {
    throw new LoadError(`no manifest.json in ${bundleDir}`, { file: 'manifest.json' });
  });
  let manifest = parseJson(bytes.toString('utf8'), 'manifest.json') as Record<string, unknown>;
  if (manifest?.schemaVersion === POINTER_SCHEMA) {
    const target = await followPointer(bundleDir, manifest);
    bundleDir = target.dir;
    pointedId = target.bundleId;
    bytes = await readFile(path.join(bundleDir, 'manifest.json'));
    manifest = parseJson(bytes.toString('utf8'), 'manifest.json') as Record<string, unknown>;
  }
  if (manifest?.schemaVersion !== MANIFEST_SCHEMA) {
    throw new LoadError(`schemaVersion must be ${MANIFEST_SCHEMA}, got ${JSON.stringify(manifest?.schemaVersion)}`, {
      file: 'manifest.json',
    });
  }
  if (!Array.isArray(manifest.files)) throw new LoadError('manifest has no files[]', { file: 'manifest.json' });
  const seen = new Set<string>();
  const files = new Map<string, BundleFile>();
  for (const entry of manifest.files.map((e) => checkEntry(e, seen))) {
    const plain = path.join(bundleDir, entry.path);
    const gz = `${plain}.gz`;
    if (await exists(plain)) files.set(entry.path, { ...entry, location: plain, gzip: false });
    else if (entry.path.endsWith('.jsonl') && (await exists(gz))) files.set(entry.path, { ...entry, location: gz, gzip: true });
    else throw new LoadError('listed in the manifest but missing (neither the file nor its .gz twin is there)', { file: entry.path });
  }
  const manifestSha256 = createHash('sha256').update(bytes).digest('hex');
  return { dir: bundleDir, bundleId: pointedId ?? manifestSha256, manifestSha256, manifestBytes: bytes, manifest: manifest as Manifest, files };
}
