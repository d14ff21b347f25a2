/**
 * The line index and the merge against it (loader/line-index.ts, line-match.ts, last-per-id.ts),
 * over files edited at random — new lines on top, lines removed, changed, moved, repeated ids,
 * blank lines, CRLF — read in chunks of random sizes. What must hold whatever the edit: applying
 * the sent lines in order to the old index, then deleting the removed rows, gives exactly the
 * last line of every id of the new file; a line is skipped only where the old index holds it;
 * and the document count the merge computes is the new file's distinct ids.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockCutter, ENTRY_BYTES, HEADER_BYTES, LineIndexWriter, encodeBlocks, entryOf, lineDigest, lineIndexPath, openLineIndex, rowHashText } from '../../loader/line-index.ts';
import { LineMatcher } from '../../loader/line-match.ts';
import { keepLastPerId } from '../../loader/last-per-id.ts';
import { lineHash } from '../../loader/row-document.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'line-index-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A small deterministic generator (mulberry32). */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function row(id: string, version: number, rand: () => number): string {
  return JSON.stringify({ id, version, pad: 'x'.repeat(Math.floor(rand() * 300)) });
}

/** Splits bytes into chunks of whole lines of random sizes (as read-lines.ts gives them). */
function chunksOf(bytes: Buffer, rand: () => number): Buffer[] {
  const chunks: Buffer[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = Math.min(bytes.length, start + 1 + Math.floor(rand() * 20_000));
    const newline = bytes.indexOf(0x0a, end - 1);
    end = newline === -1 ? bytes.length : newline + 1;
    chunks.push(bytes.subarray(start, end));
    start = end;
  }
  return chunks;
}

const idOf = (text: string) => (text.trim() === '' ? undefined : (JSON.parse(text) as { id: string }).id);

/** A build's line index of a file: every non-blank line an entry (then the last per id kept). */
async function buildIndex(file: Buffer, name: string, rand: () => number): Promise<string> {
  const writer = new LineIndexWriter(lineIndexPath(dir, name));
  for (const chunk of chunksOf(file, rand)) {
    const cutter = new BlockCutter(chunk);
    let start = 0;
    while (start < chunk.length) {
      let newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline + 1;
      if (newline === -1) newline = chunk.length;
      const content = chunk.subarray(start, newline > start && chunk[newline - 1] === 0x0d ? newline - 1 : newline);
      const id = idOf(content.toString('utf8'));
      cutter.line(end, id === undefined ? undefined : entryOf(lineDigest(content), id));
      start = end;
    }
    cutter.cut();
    writer.encoded(encodeBlocks(cutter.out), cutter.out.length, cutter.out.reduce((n, b) => n + b.entries, 0));
  }
  const header = await writer.close({ index: name, key: 'k' });
  return (await keepLastPerId(writer.path, header)).index;
}

/** Rows as an index holds them after a load: the last line of each id. */
function lastPerId(lines: string[]): Map<string, string> {
  const held = new Map<string, string>();
  for (const line of lines) {
    const id = idOf(line);
    if (id !== undefined) held.set(id, line);
  }
  return held;
}

function linesOfText(file: Buffer): string[] {
  return file.toString('utf8').split('\n').map((l) => l.replace(/\r$/, '')).filter((l, i, all) => !(i === all.length - 1 && l === ''));
}

/** Merges `next` against the index of `prev`, checks the result; returns the name of the index it wrote. */
async function mergeAndCheck(prevName: string, prevLines: string[], next: Buffer, nextName: string, rand: () => number) {
  const held = lastPerId(prevLines);
  const opened = await openLineIndex(lineIndexPath(dir, prevName), { index: prevName, key: 'k' }, held.size);
  if ('reason' in opened) throw new Error(opened.reason);
  const writer = new LineIndexWriter(lineIndexPath(dir, nextName));
  const sent: { id: string; text: string; line: number }[] = [];
  const matcher = new LineMatcher(opened, writer, 'file.jsonl', ({ text, line, digest }) => {
    expect(rowHashText(digest)).toBe(lineHash(Buffer.from(text)));
    const id = idOf(text);
    if (id !== undefined) sent.push({ id, text, line });
    return id;
  });
  for (const chunk of chunksOf(next, rand)) matcher.push(chunk);
  matcher.end();
  const end = matcher.finish();

  const nextLines = linesOfText(next);
  const expected = lastPerId(nextLines);
  // The old index, the sent lines applied in order (the last line of an id wins), the removed rows deleted.
  const docs = new Map(held);
  for (const { id, text } of sent) docs.set(id, text);
  const removedHashes = new Set(end.removed.map((h) => rowHashText(h)));
  for (const [id, text] of docs) if (removedHashes.has(lineHash(Buffer.from(text)))) docs.delete(id);
  expect(new Map([...docs].sort())).toEqual(new Map([...expected].sort()));
  expect(end.documents).toBe(expected.size);
  // Every line the old index did not hold was sent.
  const heldLines = new Set(held.values());
  const sentLines = new Set(sent.map((s) => s.line));
  nextLines.forEach((text, i) => {
    if (idOf(text) !== undefined && !heldLines.has(text)) expect(sentLines.has(i + 1), `line ${i + 1}`).toBe(true);
  });
  expect(matcher.counts.lines).toBe(nextLines.length);
  expect(matcher.counts.unchanged + matcher.counts.sent + matcher.counts.blankLines).toBe(nextLines.length);
  const header = await writer.close({ index: nextName, key: 'k' });
  const deduped = await keepLastPerId(writer.path, header);
  expect(deduped.entries).toBe(expected.size);
  return { sent, end, counts: matcher.counts };
}

/** A random next export of `lines`: new rows on top, some removed, changed, repeated, blank, moved (about `density` × 5 % of the lines edited). */
function edit(lines: string[], rand: () => number, next: () => number, density: number): string[] {
  const out: string[] = [];
  const fresh = Math.floor(rand() * 200);
  for (let i = 0; i < fresh; i++) out.push(row(`new-${next()}`, 0, rand));
  // Rows repeated by paging: a newer line of an id on top, its old line still in place below (which then wins).
  for (let i = 0; i < 5; i++) {
    const id = idOf(lines[Math.floor(rand() * lines.length)]!);
    if (id !== undefined) out.push(row(id, next(), rand));
  }
  const moved: string[] = [];
  for (const line of lines) {
    const roll = rand() / density;
    const id = idOf(line);
    if (roll < 0.02) continue; // removed
    if (id !== undefined && roll < 0.04) out.push(row(id, next(), rand)); // changed
    else if (id !== undefined && roll < 0.045) {
      out.push(line);
      out.push(row(id, next(), rand)); // repeated: a later line wins
    } else if (roll < 0.05) out.push(rand() < 0.5 ? '' : '   ');
    else if (roll < 0.052) moved.push(line);
    else out.push(line);
  }
  if (rand() < 0.5) out.splice(Math.floor(rand() * out.length), Math.floor(rand() * 400)); // a run removed
  out.push(...moved);
  return out;
}

describe('the merge of a next export against a line index', () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    // Dense edits (every block touched) and sparse ones, as in a next export.
    const density = seed <= 3 ? 1 : 0.05;
    it(`keeps the index equal to the file through three exports (seed ${seed}, ${density * 5} % of lines edited)`, async () => {
      const rand = random(seed);
      let counter = 0;
      const next = () => ++counter;
      let lines = Array.from({ length: 3000 }, () => row(`r-${next()}`, 0, rand));
      const crlf = seed % 3 === 0;
      const bytes = (ls: string[]) => Buffer.from(ls.join(crlf ? '\r\n' : '\n') + (rand() < 0.5 ? '\n' : ''));
      let name = `s${seed}-0`;
      await buildIndex(bytes(lines), name, rand);
      for (let round = 1; round <= 3; round++) {
        const edited = edit(lines, rand, next, density);
        const nextName = `s${seed}-${round}`;
        const { counts } = await mergeAndCheck(name, lines, bytes(edited), nextName, rand);
        // Most of an export's lines are unchanged, and skipped; where edits are sparse, most of them a whole block at a time.
        expect(counts.unchanged).toBeGreaterThan(edited.length * 0.8);
        if (density < 1) expect(counts.blockLines).toBeGreaterThan(edited.length * 0.7);
        lines = edited;
        name = nextName;
      }
    });
  }

  it('sends every line again when nothing is held (a file of other data)', async () => {
    const rand = random(9);
    const a = Array.from({ length: 500 }, (_, i) => row(`a-${i}`, 0, rand));
    const b = Array.from({ length: 500 }, (_, i) => row(`b-${i}`, 0, rand));
    await buildIndex(Buffer.from(a.join('\n')), 'other-0', rand);
    const { sent, end } = await mergeAndCheck('other-0', a, Buffer.from(b.join('\n')), 'other-1', rand);
    expect(sent).toHaveLength(500);
    expect(end.removed).toHaveLength(500);
  });

  it('skips an unchanged line that comes after a changed line of its id only if no line of its id was sent before it', async () => {
    const rand = random(10);
    const a = Array.from({ length: 300 }, (_, i) => row(`r-${i}`, 0, rand));
    await buildIndex(Buffer.from(a.join('\n')), 'rep-0', rand);
    // r-5 changed early, then its old line again later: the old line must win, so it is sent.
    const b = [row('r-5', 1, rand), ...a];
    const { sent } = await mergeAndCheck('rep-0', a, Buffer.from(b.join('\n')), 'rep-1', rand);
    expect(sent.map((s) => s.line)).toEqual([1, 7]);
  });
});

describe('a line index on disk', () => {
  it('is trusted only for its index, key and document count, whole and undamaged', async () => {
    const rand = random(11);
    const lines = Array.from({ length: 200 }, (_, i) => row(`r-${i}`, 0, rand));
    await buildIndex(Buffer.from(lines.join('\n')), 'disk-0', rand);
    const file = lineIndexPath(dir, 'disk-0');
    expect('header' in (await openLineIndex(file, { index: 'disk-0', key: 'k' }, 200))).toBe(true);
    expect(await openLineIndex(file, { index: 'disk-1', key: 'k' }, 200)).toEqual({ reason: 'it describes disk-0' });
    expect(await openLineIndex(file, { index: 'disk-0', key: 'other' }, 200)).toEqual({ reason: 'it was written for other content' });
    expect(await openLineIndex(file, { index: 'disk-0', key: 'k' }, 199)).toEqual({ reason: '200 entries for 199 documents' });
    expect(await openLineIndex(path.join(dir, 'missing.lines'), { index: 'x', key: 'k' }, 0)).toEqual({ reason: 'none kept' });
    const bytes = await readFile(file);
    const damaged = Buffer.from(bytes);
    damaged[HEADER_BYTES + 40 + ENTRY_BYTES]! ^= 1;
    await writeFile(file, damaged);
    expect(await openLineIndex(file, { index: 'disk-0', key: 'k' }, 200)).toEqual({ reason: 'its sha256 does not match (damaged)' });
    await writeFile(file, bytes.subarray(0, bytes.length - 5));
    expect((await openLineIndex(file, { index: 'disk-0', key: 'k' }, 200)) as { reason: string }).toHaveProperty('reason', expect.stringMatching(/bytes where its header says/));
  });
});
