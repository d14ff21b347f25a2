/**
 * The registry's next export of a bundle, for tests and benchmarks of incremental loads: a copy
 * whose files are the same bytes except those an edit rewrites (kept plain or gzip-only as they
 * were), with a later `generatedAt`, and the manifest, its high-water marks and the catalog
 * saying what the rewritten files now hold. Unedited files keep their sha256, as an export of
 * unchanged tables does.
 */
import { copyFile, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { encodePretty } from './go-json.ts';
import { type BundleRow, type Manifest, readJson, readManifest, readRows, rowFilePath } from './read-bundle.ts';
import { RowFile, writeJsonDocument } from './row-file.ts';

/** Rows of a file in, rows of its next export out (in the order to write). */
export type RowEdit = (rows: AsyncIterable<BundleRow>) => AsyncIterable<BundleRow>;

/** The catalog count of each collection (export-format.md §3). */
const CATALOG_COUNTS: Record<string, string> = {
  entities: 'entityCount',
  killmails: 'killmailCount',
  sources: 'sourceCount',
  facts: 'factCount',
  relations: 'relationCount',
  source_artefacts: 'artefactCount',
  events: 'eventCount',
  chain_objects: 'chainObjectCount',
};

async function* rowsOf(dir: string, stem: string): AsyncGenerator<BundleRow> {
  for await (const { row } of readRows(dir, `${stem}.jsonl`)) yield row;
}

/**
 * Writes into `to` the next export of the bundle in `from`: `edits` rewrite files by stem
 * (`events`), `laterMs` moves `generatedAt` on (default one hour).
 */
export async function writeNextExport(from: string, to: string, edits: Record<string, RowEdit>, laterMs = 3_600_000): Promise<Manifest> {
  await rm(to, { recursive: true, force: true });
  await mkdir(to, { recursive: true });
  const edited = new Set(Object.keys(edits).map((stem) => `${stem}.jsonl`));
  for (const name of await readdir(from)) {
    if (name === 'manifest.json' || name === 'catalog.json' || edited.has(name.replace(/\.gz$/, ''))) continue;
    await copyFile(path.join(from, name), path.join(to, name));
  }
  const manifest = await readManifest(from);
  const generatedAt = new Date(Date.parse(manifest.generatedAt) + laterMs).toISOString().replace(/\.000Z$/, 'Z');
  const catalog: BundleRow = { ...(await readJson(from, 'catalog.json')), generatedAt };
  const entries = new Map(manifest.files.map((f) => [f.path, f]));
  for (const [stem, edit] of Object.entries(edits)) {
    const name = `${stem}.jsonl`;
    const file = new RowFile(to, name, {
      gzip: rowFilePath(from, name).gzip,
      mark: (row) => ({ id: String(row.id ?? ''), ...(typeof row.occurredAt === 'string' ? { time: row.occurredAt } : {}) }),
    });
    for await (const row of edit(rowsOf(from, stem))) await file.write(row);
    const { entry, first, last } = await file.close();
    entries.set(name, entry);
    const mark = manifest.highWaterMarks[stem];
    if (mark) Object.assign(mark, { rowCount: entry.rowCount, firstId: first?.id, lastId: last?.id, firstTime: first?.time, lastTime: last?.time });
    if (CATALOG_COUNTS[stem]) catalog[CATALOG_COUNTS[stem]] = entry.rowCount;
  }
  entries.set('catalog.json', await writeJsonDocument(to, 'catalog.json', catalog));
  const next: Manifest = { ...manifest, generatedAt, files: manifest.files.map((f) => entries.get(f.path)!) };
  await writeFile(path.join(to, 'manifest.json'), encodePretty(next));
  return next;
}
