/**
 * Reading a bundle back, for tests and benchmarks that compute expected results from the files
 * themselves (never from Elasticsearch): the manifest, JSON documents, and the rows of a JSONL
 * file, plain or from its `.jsonl.gz` twin, streamed with line numbers.
 *
 * Deliberately simple and independent of the loader: no checksum verification, no document
 * mapping, so a loader bug cannot hide in shared code.
 */
import { createReadStream, existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import type { Manifest as ExportManifest, ManifestFile } from '../loader/bundle.ts';

/** A parsed row: any JSON object (rows carry fields of varying types by design). */
export type BundleRow = Record<string, any>;

export type { ManifestFile };

/** A manifest the generator wrote: the one declaration (loader/bundle.ts), with what every generated one holds. */
export type Manifest = ExportManifest & Required<Pick<ExportManifest, 'generatedAt' | 'cycles' | 'highWaterMarks'>>;

/** Parses `manifest.json` of a bundle directory. */
export async function readManifest(dir: string): Promise<Manifest> {
  return (await readJson(dir, 'manifest.json')) as Manifest;
}

/** Parses a JSON document of the bundle (`catalog.json`, `ops_cursors.json`, ...). */
export async function readJson(dir: string, name: string): Promise<BundleRow> {
  return JSON.parse(await readFile(path.join(dir, name), 'utf8')) as BundleRow;
}

/**
 * The path that holds a JSONL file's rows: `<file>` if present, else `<file>.gz`. `file` may be
 * given as `entities`, `entities.jsonl` or `entities.jsonl.gz`.
 */
export function rowFilePath(dir: string, file: string): { path: string; gzip: boolean } {
  const name = file.replace(/\.gz$/, '').replace(/(\.jsonl)?$/, '.jsonl');
  const plain = path.join(dir, name);
  if (existsSync(plain)) return { path: plain, gzip: false };
  if (existsSync(`${plain}.gz`)) return { path: `${plain}.gz`, gzip: true };
  throw new Error(`${name} is missing from ${dir} (neither plain nor .gz)`);
}

/** Streams the rows of a JSONL file with their 1-based line numbers. Blank lines are skipped. */
export async function* readRows(dir: string, file: string): AsyncGenerator<{ row: BundleRow; line: number }> {
  const source = rowFilePath(dir, file);
  const stream = createReadStream(source.path);
  const input = source.gzip ? stream.pipe(createGunzip()) : stream;
  const lines = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of lines) {
      line += 1;
      if (text.trim() === '') continue;
      try {
        yield { row: JSON.parse(text) as BundleRow, line };
      } catch (error) {
        throw new Error(`${path.basename(source.path)}:${line}: ${(error as Error).message}`);
      }
    }
  } finally {
    lines.close();
    stream.destroy();
  }
}

/** All rows of a JSONL file (small bundles only). */
export async function readAllRows(dir: string, file: string): Promise<BundleRow[]> {
  const rows: BundleRow[] = [];
  for await (const { row } of readRows(dir, file)) rows.push(row);
  return rows;
}
