/**
 * Publishes a bundle directory as the registry does (export-format.md §1), to a directory or an
 * S3-compatible store (signed PUTs), for tests, benchmarks and compose:
 * - `pointer` layout (the registry's publisher): every listed file as stored (plain, or only
 *   its `.jsonl.gz` twin) to `<prefix>/bundles/<bundleId>/`, then that folder's `manifest.json`,
 *   then last the overwritable pointer `<prefix>/latest/manifest.json`
 *   (`registry.export_publish_pointer.v1`).
 * - `flat` layout (the Worker's): every file to `<prefix>/latest/` (a twin left by an earlier
 *   publication removed, so no stale plain copy shadows a new `.gz`), then the manifest itself last.
 *
 * The bundle id is the sha256 of the exact manifest bytes unless one is given. Writes are plain
 * (the registry's conditional put keeps `bundles/` immutable; tests publish new ids instead), and
 * nothing is listed or verified here: loading is what checks a publication.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseSource, resolveStoreUrl, s3Parts } from '../src/store/location.ts';
import { type ObjectStore, createObjectStore } from '../src/store/object-store.ts';
import { type Manifest, readManifest } from './read-bundle.ts';

export const POINTER_SCHEMA = 'registry.export_publish_pointer.v1';

export interface PublishOptions {
  layout?: 'pointer' | 'flat';
  /** Signs the PUTs to an `s3://` target (default: a client without a key, enough for directories). */
  store?: ObjectStore;
  /** Default: the sha256 of the manifest bytes (the registry's default). */
  bundleId?: string;
  /** The pointer's `publishedAt` (default: now). */
  now?: Date;
}

export interface PublishResult {
  bundleId: string;
  manifestSha256: string;
  /** Where the bundle's files went, and the `latest/manifest.json` written last (path or store URL). */
  bundle: string;
  latest: string;
}

/** Where a publication writes: relative keys (`bundles/<id>/x.jsonl`) under a directory or a store folder. */
interface Target {
  /** The key prefix the pointer names (`registry` for `s3://bucket/registry`). */
  prefix: string;
  locate(key: string): string;
  put(key: string, from: { file: string } | { bytes: Buffer }, contentType: string): Promise<void>;
  remove(key: string): Promise<void>;
}

function targetOf(target: string, store: ObjectStore): Target {
  const location = parseSource(target, process.cwd());
  if (location.kind === 'dir') {
    const root = location.path;
    return {
      prefix: path.basename(root),
      locate: (key) => path.join(root, key),
      async put(key, from, _contentType) {
        const file = path.join(root, key);
        await mkdir(path.dirname(file), { recursive: true });
        // Written beside, then renamed: a reader of `latest/manifest.json` sees the old one or the new one.
        const partial = `${file}.partial`;
        if ('file' in from) await copyFile(from.file, partial);
        else await writeFile(partial, from.bytes);
        await rename(partial, file);
      },
      remove: (key) => rm(path.join(root, key), { force: true }),
    };
  }
  const folder = location.url;
  // Keys are `/`-separated segments, each escaped as one (a bundle id may hold any other character).
  const urlOf = (key: string) => resolveStoreUrl(folder, key.split('/').map(encodeURIComponent).join('/'));
  return {
    prefix: folder.startsWith('s3:') ? s3Parts(folder).key.replace(/\/$/, '') : new URL(folder).pathname.replace(/^\/|\/$/g, ''),
    locate: urlOf,
    async put(key, from, contentType) {
      const body = 'file' in from ? { file: from.file, size: (await stat(from.file)).size } : from.bytes;
      await store.put(urlOf(key), body, { contentType });
    },
    remove: (key) => store.delete(urlOf(key)),
  };
}

/** The name a listed file is stored under in the bundle directory: plain, else its `.gz` twin. */
function storedName(dir: string, file: string): string {
  if (existsSync(path.join(dir, file))) return file;
  if (existsSync(path.join(dir, `${file}.gz`))) return `${file}.gz`;
  throw new Error(`${file} is listed in ${dir}/manifest.json but missing`);
}

export async function publishBundle(bundleDir: string, target: string, options: PublishOptions = {}): Promise<PublishResult> {
  const { layout = 'pointer', store = createObjectStore(), now = new Date() } = options;
  const out = targetOf(target, store);
  const manifestBytes = await readFile(path.join(bundleDir, 'manifest.json'));
  const manifest = JSON.parse(manifestBytes.toString('utf8')) as Manifest;
  const manifestSha256 = createHash('sha256').update(manifestBytes).digest('hex');
  const bundleId = options.bundleId ?? manifestSha256;
  const keyOf = (key: string) => (out.prefix ? `${out.prefix}/${key}` : key);
  const folder = layout === 'pointer' ? `bundles/${bundleId}` : 'latest';

  const objects = [];
  for (const file of manifest.files) {
    const stored = storedName(bundleDir, file.path);
    if (layout === 'flat') await out.remove(`${folder}/${stored === file.path ? `${file.path}.gz` : file.path}`);
    await out.put(`${folder}/${stored}`, { file: path.join(bundleDir, stored) }, stored.endsWith('.gz') ? 'application/gzip' : file.contentType);
    objects.push({ ...file, objectKey: keyOf(`${folder}/${stored}`) });
  }
  await out.put(`${folder}/manifest.json`, { bytes: manifestBytes }, 'application/json');
  if (layout === 'pointer') {
    const manifestKey = keyOf(`${folder}/manifest.json`);
    const pointer = {
      schemaVersion: POINTER_SCHEMA,
      publishedAt: now.toISOString(),
      registry: manifest.registry,
      apiVersion: manifest.apiVersion,
      bundleId,
      manifestKey,
      manifestSha256,
      files: [
        ...objects,
        { path: 'manifest.json', objectKey: manifestKey, contentType: 'application/json', sha256: manifestSha256, sizeBytes: manifestBytes.length, rowCount: 1 },
      ],
    };
    await out.put('latest/manifest.json', { bytes: Buffer.from(`${JSON.stringify(pointer)}\n`) }, 'application/json');
  }
  return { bundleId, manifestSha256, bundle: out.locate(`${folder}/`), latest: out.locate('latest/manifest.json') };
}
