/**
 * Where a bundle is read from, as one small interface over a local directory and a store folder
 * (`s3://bucket/prefix/`, `https://host/path/`): a document read whole (conditionally, for
 * polling), whether a file is there with its stored size and version, and a file's stored bytes
 * as a stream (retried and resumed inside by src/store for a store folder).
 *
 * `findManifest` is the one rule for what a source names: a folder holding `manifest.json` (a
 * bundle, or a `latest/` folder holding a pointer or a flat manifest), else a publication prefix
 * whose `latest/manifest.json` does. It deliberately does not parse the manifest (bundle.ts
 * does) nor list anything: everything is found by name.
 */
import { createReadStream } from 'node:fs';
import { open as openFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { StoreError } from '../src/store/errors.ts';
import { parseSource, resolveStoreUrl } from '../src/store/location.ts';
import type { ObjectStore } from '../src/store/object-store.ts';
import { LoadError } from './errors.ts';

/** Read size of local files: one chunk is one batch of lines (read-lines.ts). */
const CHUNK_BYTES = 1 << 20;

/** What identifies one version of a document: the store's validators, or a file's size, mtime and inode. */
export interface DocumentVersion {
  etag?: string;
  lastModified?: string;
  size?: number;
  mtimeMs?: number;
  ino?: number;
}

export type DocumentRead =
  | { status: 'ok'; bytes: Buffer; version: DocumentVersion }
  | { status: 'not-modified' }
  | { status: 'missing' };

/** A stored file: its size as stored and its version (sent back as a precondition when it is read). */
export interface StoredFile {
  size: number | undefined;
  etag?: string;
  lastModified?: string;
}

export interface Folder {
  readonly kind: 'dir' | 'store';
  /** The directory, or the store folder URL (ending in `/`): what messages and the generation document name. */
  readonly where: string;
  /** A folder relative to this one (`latest/`, `../bundles/`). */
  resolve(relative: string): Folder;
  /** The sub-folder of that bare name (any characters but `/`). */
  sub(name: string): Folder;
  /** The path or store URL of a file in it. */
  locate(name: string): string;
  /** A document whole; `not-modified` when `since` still describes it. */
  read(name: string, options?: { since?: DocumentVersion; signal?: AbortSignal }): Promise<DocumentRead>;
  /** The stored file, or undefined when it is not there. */
  stat(name: string, options?: { signal?: AbortSignal }): Promise<StoredFile | undefined>;
  /** The stored bytes of a file `stat` found (that version only). */
  open(name: string, stored: StoredFile, options?: { signal?: AbortSignal }): AsyncIterable<Buffer>;
}

function missing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function sameFile(a: DocumentVersion | undefined, b: DocumentVersion): boolean {
  return a !== undefined && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino;
}

function directory(dir: string): Folder {
  return {
    kind: 'dir',
    where: dir,
    resolve: (relative) => directory(path.resolve(dir, relative)),
    sub: (name) => directory(path.join(dir, name)),
    locate: (name) => path.join(dir, name),
    async read(name, { since } = {}) {
      // One handle for the stat and the read, so the version describes the bytes returned.
      const handle = await openFile(path.join(dir, name)).catch((error: unknown) => {
        if (missing(error)) return undefined;
        throw error;
      });
      if (!handle) return { status: 'missing' };
      try {
        const { size, mtimeMs, ino } = await handle.stat();
        const version = { size, mtimeMs, ino };
        if (sameFile(since, version)) return { status: 'not-modified' };
        return { status: 'ok', bytes: await handle.readFile(), version };
      } finally {
        await handle.close();
      }
    },
    async stat(name) {
      const found = await stat(path.join(dir, name)).catch((error: unknown) => {
        if (missing(error)) return undefined;
        throw error;
      });
      return found?.isFile() ? { size: found.size } : undefined;
    },
    open(name, _stored, { signal } = {}) {
      const stream = createReadStream(path.join(dir, name), { highWaterMark: CHUNK_BYTES, signal });
      // An abort before the reader starts must not be an unhandled 'error': the reader still gets it on its own listener.
      stream.on('error', () => {});
      return stream;
    },
  };
}

function storeFolder(store: ObjectStore, folder: string): Folder {
  // Names are bare (checked against the manifest): one path segment each, escaped as one.
  const locate = (name: string) => resolveStoreUrl(folder, encodeURIComponent(name));
  return {
    kind: 'store',
    where: folder,
    resolve: (relative) => storeFolder(store, resolveStoreUrl(folder, relative)),
    sub: (name) => storeFolder(store, resolveStoreUrl(folder, `${encodeURIComponent(name)}/`)),
    locate,
    async read(name, { since, signal } = {}) {
      const got = await store.get(locate(name), { since, signal });
      if (got.status !== 'ok') return got;
      return { status: 'ok', bytes: got.bytes, version: { etag: got.etag, lastModified: got.lastModified, size: got.bytes.length } };
    },
    stat: (name, { signal } = {}) => store.head(locate(name), { signal }),
    async *open(name, stored, { signal } = {}) {
      yield* await store.open(locate(name), { validator: { etag: stored.etag, lastModified: stored.lastModified }, signal });
    },
  };
}

/** The folder an operator named: a directory (relative to `cwd`), or an `s3://` / `http(s)://` folder. */
export function openFolder(source: string, store: ObjectStore, cwd = process.cwd()): Folder {
  let location;
  try {
    location = parseSource(source, cwd);
  } catch (error) {
    if (error instanceof StoreError) throw new LoadError(error.message, { transient: error.transient });
    throw error;
  }
  return location.kind === 'dir' ? directory(location.path) : storeFolder(store, location.url);
}

/**
 * The folder whose `manifest.json` answers for `root`, and that document: `root` itself, else
 * `root/latest/`. A store that refuses to say whether a key exists (S3 answers 403 AccessDenied
 * for a missing key to a key without s3:ListBucket) counts as absent for the first probe only.
 */
export async function findManifest(
  root: Folder,
  options: { since?: DocumentVersion; at?: 'root' | 'latest'; signal?: AbortSignal } = {},
): Promise<{ folder: Folder; read: DocumentRead }> {
  const { since, at, signal } = options;
  if (at !== 'latest') {
    const read = await root.read('manifest.json', { since: at === 'root' ? since : undefined, signal }).catch((error: unknown) => {
      if (error instanceof StoreError && error.status === 403 && error.code === 'AccessDenied') return { status: 'missing' } as const;
      throw error;
    });
    if (read.status !== 'missing') return { folder: root, read };
  }
  const latest = root.resolve('latest/');
  return { folder: latest, read: await latest.read('manifest.json', { since: at === 'latest' ? since : undefined, signal }) };
}

/** A StoreError as the loader's one error line (the URL and the status say it all). */
export function asLoadError(error: unknown): unknown {
  return error instanceof StoreError ? new LoadError(error.message, { transient: error.transient }) : error;
}
