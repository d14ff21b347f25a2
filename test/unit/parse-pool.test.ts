/**
 * The parse pool's workers write exactly the bulk bytes the loader's own thread writes for the
 * same lines (expected: every line of a generated bundle's files, turned into bulk lines on
 * this thread), first-seen instants from a lookup included; a bad line fails with its
 * `file:line`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeBundle } from '../../generator/write-bundle.ts';
import { type Bundle, type BundleFile, openBundle } from '../../loader/bundle.ts';
import { LoadError } from '../../loader/errors.ts';
import { ParsePool, poolSize } from '../../loader/parse-pool.ts';
import { readChunks, readLines } from '../../loader/read-lines.ts';
import { bulkLines, lineHash, parseRow } from '../../loader/row-document.ts';
import { parseCycleStarts } from '../../src/config.ts';
import { INDICES } from '../../src/indices/all.ts';
import type { IndexDescription, LoadContext } from '../../src/indices/description.ts';
import { createObjectStore } from '../../src/store/object-store.ts';

const cycleStarts = parseCycleStarts('5=2026-03-11T09:00:00Z,6=2026-06-25T09:00:00Z');
const context: LoadContext = { cycleStarts, lookupEntities: async () => new Map(), lookupNpcKills: async () => new Set(), lookupTribes: async () => new Map() };
const versionBase = 7 * 2 ** 32;
const indexedAt = '2026-11-27T10:00:00.000Z';
/** Small blocks, so a chunk gives several. */
const flushBytes = 16 * 1024;

let work: string;
let bundle: Bundle;
let pool: ParsePool;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'parse-pool-'));
  await writeBundle(work, { scale: 1, seed: 3 });
  bundle = await openBundle(work, { store: createObjectStore() });
  pool = new ParsePool(2, cycleStarts);
});

afterAll(async () => {
  await pool?.close();
  await rm(work, { recursive: true, force: true });
});

/** What the loader's thread sends for a file: every line's bulk lines, in order. */
async function sequential(file: BundleFile, description: IndexDescription<any>, seen?: Map<string, string>): Promise<Buffer> {
  const pieces: Buffer[] = [];
  for await (const batch of readLines(file).batches) {
    for (const { text, bytes, line } of batch) {
      if (text.trim() === '') continue;
      const built = parseRow(text, line, file.path, description, context);
      const firstSeen = description.firstSeen ? (seen?.get(built.doc.id) ?? indexedAt) : undefined;
      pieces.push(...bulkLines(built, bytes, line, lineHash(bytes), versionBase, description, firstSeen));
    }
  }
  return Buffer.concat(pieces);
}

/** The same file through the pool: its blocks, in file order; each document's end and line checked on the way. */
async function pooled(file: BundleFile, description: IndexDescription<any>, seen?: Map<string, string>): Promise<{ body: Buffer; rows: number; blocks: number }> {
  const bodies: Buffer[] = [];
  let rows = 0;
  let blocks = 0;
  let lastLine = 0;
  for await (const { bytes, firstLine } of readChunks(file).chunks) {
    const lookup = seen ? async (ids: string[]) => new Map(ids.flatMap((id) => (seen.has(id) ? [[id, seen.get(id)!] as const] : []))) : undefined;
    const result = await pool.parse({ file: file.path, index: description.name, bytes, firstLine, versionBase, indexedAt, lookup: lookup !== undefined, flushBytes }, { firstSeen: lookup });
    rows += result.rows;
    for (const block of result.blocks) {
      blocks += 1;
      expect(block.ends.at(-1)).toBe(block.body.length);
      for (const line of block.lines) {
        expect(line).toBeGreaterThan(lastLine);
        lastLine = line;
      }
      bodies.push(block.body);
    }
  }
  return { body: Buffer.concat(bodies), rows, blocks };
}

describe('the parse pool', () => {
  it('writes the bulk bytes of the loader thread for every file it may parse', async () => {
    let checked = 0;
    for (const description of INDICES) {
      if (description.prepare) continue;
      const file = description.files.map((stem) => bundle.files.get(`${stem}.jsonl`)).find(Boolean);
      if (!file || file.rowCount === 0) continue;
      const expected = await sequential(file, description);
      const actual = await pooled(file, description);
      expect(actual.rows, file.path).toBe(file.rowCount);
      expect(actual.body.equals(expected), file.path).toBe(true);
      checked += 1;
    }
    expect(checked).toBeGreaterThanOrEqual(5);
  });

  it('gives first-seen instants of the previous index to the ids it holds, the load instant to the others', async () => {
    const description = INDICES.find((d) => d.name === 'events')!;
    expect(description.firstSeen).toBe(true);
    const file = bundle.files.get('events.jsonl')!;
    const seen = new Map<string, string>();
    let n = 0;
    for await (const batch of readLines(file).batches) {
      for (const { text } of batch) if (n++ % 2 === 0) seen.set(String(JSON.parse(text).id), '2026-01-02T03:04:05.123456789Z');
    }
    const expected = await sequential(file, description, seen);
    const actual = await pooled(file, description, seen);
    expect(actual.blocks).toBeGreaterThan(1);
    expect(actual.body.equals(expected)).toBe(true);
    expect(actual.body.includes('2026-01-02T03:04:05.123456789Z')).toBe(true);
  });

  it('fails a bad line with its file and line number', async () => {
    const [first] = (await readLines(bundle.files.get('sources.jsonl')!).batches[Symbol.asyncIterator]().next()).value!;
    const good = `${first!.text}\n`;
    const parse = (text: Buffer, firstLine = 1) =>
      pool.parse({ file: 'sources.jsonl', index: 'sources', bytes: text, firstLine, versionBase, indexedAt, lookup: false, flushBytes });
    const broken = await parse(Buffer.from(`${good}${good}{"id": broken\n${good}`), 41).catch((e: unknown) => e);
    expect(broken).toBeInstanceOf(LoadError);
    expect((broken as LoadError).message).toMatch(/^sources\.jsonl:43: invalid JSON/);
    expect((broken as LoadError).line).toBe(43);
    const notUtf8 = await parse(Buffer.concat([Buffer.from(good), Buffer.from([0x7b, 0xff, 0x7d, 0x0a])])).catch((e: unknown) => e);
    expect((notUtf8 as LoadError).message).toBe('sources.jsonl:2: not valid UTF-8');
    // The pool goes on after a bad chunk.
    expect((await parse(Buffer.from(good))).rows).toBe(1);
  });

  it('is not used below 4 cores unless asked', () => {
    expect(poolSize(undefined, 2)).toBe(0);
    expect(poolSize(undefined, 16)).toBe(2);
    expect(poolSize(undefined, 4)).toBe(2);
    expect(poolSize(3, 2)).toBe(3);
    expect(poolSize(0, 16)).toBe(0);
  });
});
