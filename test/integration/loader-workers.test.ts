/**
 * A load whose files are parsed on the parse pool's worker threads (loader/parse-pool.ts),
 * against a real Elasticsearch: every index holds one document per distinct id of its file and
 * the rows verbatim (expected from the bundle files), first-seen instants carried over from the
 * live generation on a reload; a bad line is refused with its file and line, and nothing of the
 * failed load stays behind.
 */
import { createHash } from 'node:crypto';
import { appendFile, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readManifest, readRows } from '../../generator/read-bundle.ts';
import { writeBundle } from '../../generator/write-bundle.ts';
import { LoadError } from '../../loader/errors.ts';
import { HEADER_BYTES, lineIndexDir, lineIndexPath } from '../../loader/line-index.ts';
import { type LoadOptions, type LoadSummary, loadBundle } from '../../loader/load-bundle.ts';
import { parseCycleStarts } from '../../src/config.ts';
import { aliasName } from '../../src/indices/generation.ts';
import { IDENTITY, distinctIds } from '../../harness/bundle-counts.ts';
import { deleteIndices, testClient, uniquePrefix } from '../support/elasticsearch.ts';
import { storedRows } from '../support/stored-rows.ts';

const cycleStarts = parseCycleStarts('5=2026-03-11T09:00:00Z,6=2026-06-25T09:00:00Z');
const prefix = uniquePrefix('workers-load');
let client: Client;
let work: string;
let bundle: string;

function options(extra: Partial<LoadOptions> = {}): LoadOptions {
  // Two workers, and every file on them however small (killmails read other indices: never).
  return { client, prefix, dataDir: path.join(work, 'data'), cycleStarts, concurrency: 8, workers: 2, workerMinBytes: 0, ...extra };
}

beforeAll(async () => {
  client = testClient();
  work = await mkdtemp(path.join(tmpdir(), 'workers-load-'));
  bundle = path.join(work, 'bundle');
  await writeBundle(bundle, { scale: 2, seed: 5 });
});

afterAll(async () => {
  await deleteIndices(client, prefix);
  await deleteIndices(client, `${prefix}-thread`);
  await client.close();
  await rm(work, { recursive: true, force: true });
});

describe('a load through the parse pool', () => {
  it('gives one document per distinct id of each file, rows verbatim', async () => {
    const summary = await loadBundle(bundle, options());
    expect(summary.status).toBe('loaded');
    const pooled = summary.files.filter((f) => f.pooled).map((f) => f.file);
    expect(pooled).toContain('events.jsonl');
    expect(pooled).not.toContain('killmails.jsonl');
    const manifest = await readManifest(bundle);
    for (const stem of Object.keys(IDENTITY)) {
      const entry = manifest.files.find((f: { path: string }) => f.path === `${stem}.jsonl`);
      if (!entry) continue;
      const { rows, ids } = await distinctIds(bundle, stem);
      expect(rows, stem).toBe(entry.rowCount);
      expect((await client.count({ index: aliasName(prefix, stem) })).count, stem).toBe(ids.size);
    }
    // The last line of an id is its row, whatever order the workers' blocks were sent in.
    const last = new Map<string, unknown>();
    for await (const { row } of readRows(bundle, 'events.jsonl')) last.set(String(row.id), row);
    const sample = [...last.keys()].filter((_, i) => i % 7 === 0).slice(0, 200);
    const found = await storedRows(client, { index: aliasName(prefix, 'events'), size: sample.length, query: { ids: { values: sample } } });
    expect(found.length).toBe(sample.length);
    for (const { row } of found) expect(row).toEqual(last.get(String(row.id)));
  });

  it('keeps first-seen instants of the live generation on a forced reload', async () => {
    const before = await client.search<{ row: { id: string } }>({ index: aliasName(prefix, 'events'), size: 20, docvalue_fields: ['indexedAt'], sort: ['_doc'] });
    const reloaded = await loadBundle(bundle, options({ force: true }));
    expect(reloaded.files.find((f) => f.file === 'events.jsonl')?.pooled).toBe(true);
    const ids = before.hits.hits.map((h) => h._id!);
    const after = await client.search({ index: aliasName(prefix, 'events'), size: 20, query: { ids: { values: ids } }, docvalue_fields: ['indexedAt'] });
    const firstSeen = (hits: { _id?: string; fields?: Record<string, unknown[]> }[]) => new Map(hits.map((h) => [h._id, h.fields?.indexedAt?.[0]]));
    expect(firstSeen(after.hits.hits)).toEqual(firstSeen(before.hits.hits));
  });

  it('refuses a bad line with its file and line number, and leaves nothing of the load behind', async () => {
    const dir = path.join(work, 'corrupt');
    await cp(bundle, dir, { recursive: true });
    const rowCount = (await readManifest(dir)).files.find((f: { path: string }) => f.path === 'sources.jsonl')!.rowCount;
    await appendFile(path.join(dir, 'sources.jsonl'), '{"id": broken\n');
    const indicesBefore = Object.keys(await client.indices.get({ index: `${prefix}-*` })).sort();
    const error = await loadBundle(dir, options({ force: true })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect((error as LoadError).message).toMatch(new RegExp(`^sources\\.jsonl:${rowCount + 1}: invalid JSON`));
    expect(Object.keys(await client.indices.get({ index: `${prefix}-*` })).sort()).toEqual(indicesBefore);
  });

  it('names the line of a row Elasticsearch refuses, inside a block of many documents', async () => {
    const dir = path.join(work, 'refused');
    await cp(bundle, dir, { recursive: true });
    const file = path.join(dir, 'sources.jsonl');
    const lines = (await readFile(file, 'utf8')).split('\n');
    lines[2] = lines[2]!.replace(/^\{/, '{"title":"first",');
    await writeFile(file, lines.join('\n'));
    const indicesBefore = Object.keys(await client.indices.get({ index: `${prefix}-*` })).sort();
    const error = await loadBundle(dir, options({ force: true })).catch((e: unknown) => e);
    expect((error as LoadError).message).toMatch(/^sources\.jsonl:3: Elasticsearch refused the row \(document_parsing_exception: .*Duplicate field 'title'/);
    expect(Object.keys(await client.indices.get({ index: `${prefix}-*` })).sort()).toEqual(indicesBefore);
  });

  it("cuts the same line index of a file with blank lines on the workers as on the loader's thread", async () => {
    const dir = path.join(work, 'blanks');
    await cp(bundle, dir, { recursive: true });
    // A blank line after every tenth of a file the registry's verifier does not shape-check.
    const file = path.join(dir, 'relations.jsonl');
    const text = (await readFile(file, 'utf8')).split('\n').map((line, i) => (i % 10 === 9 && line !== '' ? `${line}\n` : line)).join('\n');
    await writeFile(file, text);
    const manifestFile = path.join(dir, 'manifest.json');
    const manifest = JSON.parse(await readFile(manifestFile, 'utf8'));
    const entry = manifest.files.find((f: { path: string }) => f.path === 'relations.jsonl');
    // The manifest counts a file's lines, blank ones too.
    const blanks = text.split('\n').length - (await readFile(path.join(bundle, 'relations.jsonl'), 'utf8')).split('\n').length;
    expect(blanks).toBeGreaterThan(1);
    Object.assign(entry, { sha256: createHash('sha256').update(text).digest('hex'), sizeBytes: Buffer.byteLength(text), rowCount: entry.rowCount + blanks });
    await writeFile(manifestFile, JSON.stringify(manifest));
    /** The line index the load wrote for its relations index, without its header (which names the index). */
    const body = async (p: string, summary: LoadSummary) => {
      const index = summary.indices.find((r) => r.name === 'relations')!.index;
      return (await readFile(lineIndexPath(lineIndexDir(path.join(work, 'data'), p), index))).subarray(HEADER_BYTES);
    };
    const pooled = await loadBundle(dir, options({ force: true }));
    expect(pooled.files.find((f) => f.file === 'relations.jsonl')?.pooled).toBe(true);
    const threaded = await loadBundle(dir, options({ prefix: `${prefix}-thread`, workers: 0 }));
    expect(threaded.files.find((f) => f.file === 'relations.jsonl')?.pooled).toBeFalsy();
    expect((await body(`${prefix}-thread`, threaded)).equals(await body(prefix, pooled)), 'the same blocks, blank lines where they stand').toBe(true);
    const { ids } = await distinctIds(dir, 'relations');
    expect((await client.count({ index: aliasName(`${prefix}-thread`, 'relations') })).count).toBe(ids.size);
  });
});
