/**
 * The merge join behind `/v1/changes` (src/query/changes.ts): two id-ordered collections read a
 * batch at a time, as the route reads them, give exactly their set difference and the ids whose
 * line hash differs, in UTF-8 byte order, for any batch size; ids that sort differently in
 * UTF-16 and in UTF-8 included.
 */
import { describe, expect, it } from 'vitest';
import { Random } from '../../generator/random.ts';
import { type Change, type Line, comparedThrough, compareIds, mergeBatches } from '../../src/query/changes.ts';

/** The batches after `after` of an id-ordered list, as a search with search_after reads them. */
const batchAfter = (lines: readonly Line[], after: string | undefined, size: number) => {
  const rest = after === undefined ? lines : lines.filter((l) => compareIds(l.id, after) > 0);
  const batch = rest.slice(0, size);
  return { lines: batch, full: batch.length === size };
};

/** The route's loop over one collection. */
function walk(from: readonly Line[], to: readonly Line[], size: number): Change[] {
  const out: Change[] = [];
  let after: string | undefined;
  for (;;) {
    const a = batchAfter(from, after, size);
    const b = batchAfter(to, after, size);
    const through = comparedThrough(a.lines, a.full, b.lines, b.full);
    out.push(...mergeBatches(a.lines, b.lines, through));
    if (through === undefined) return out;
    after = through;
  }
}

/** The difference computed plainly: both maps, every id of either, in byte order. */
function naive(from: readonly Line[], to: readonly Line[]): Change[] {
  const was = new Map(from.map((l) => [l.id, l.hash]));
  const is = new Map(to.map((l) => [l.id, l.hash]));
  const ids = [...new Set([...was.keys(), ...is.keys()])].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return ids.flatMap((id): Change[] => {
    if (!is.has(id)) return [{ id, change: 'removed' }];
    if (!was.has(id)) return [{ id, change: 'added' }];
    return was.get(id) === is.get(id) ? [] : [{ id, change: 'changed' }];
  });
}

const ordered = (lines: Line[]) => lines.sort((a, b) => compareIds(a.id, b.id));

describe('the changes merge', () => {
  it('orders ids by their UTF-8 bytes, as Elasticsearch sorts keywords', () => {
    // U+FF5E is one UTF-16 unit above a surrogate pair's first; in UTF-8 it sorts before U+1F600.
    expect(compareIds('\u{FF5E}', '\u{1F600}')).toBeLessThan(0);
    expect('\u{FF5E}' < '\u{1F600}').toBe(false);
  });

  it('gives exactly the difference of two collections, for any batch size', () => {
    const random = new Random(58);
    const next = () => random.next();
    const alphabet = ['a', 'b', 'z', 'é', '\u{FF5E}', '\u{1F600}', ':'];
    for (let run = 0; run < 300; run += 1) {
      const ids = new Set<string>();
      const n = Math.floor(next() * 60);
      while (ids.size < n) ids.add(Array.from({ length: 1 + Math.floor(next() * 3) }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''));
      const from: Line[] = [];
      const to: Line[] = [];
      for (const id of ids) {
        const fate = next();
        if (fate < 0.2) from.push({ id, hash: 'h' });
        else if (fate < 0.4) to.push({ id, hash: 'h' });
        else {
          from.push({ id, hash: 'h' });
          to.push({ id, hash: fate < 0.55 ? 'other' : 'h' });
        }
      }
      ordered(from);
      ordered(to);
      const size = 1 + Math.floor(next() * 7);
      expect(walk(from, to, size), `run ${run}, batches of ${size}`).toEqual(naive(from, to));
    }
  });

  it('compares no further than the shorter full batch reaches', () => {
    const lines = (...ids: string[]) => ids.map((id) => ({ id, hash: 'h' }));
    expect(comparedThrough(lines('a', 'c'), true, lines('b', 'd'), true)).toBe('c');
    expect(comparedThrough(lines('a', 'c'), false, lines('b', 'd'), true)).toBe('d');
    expect(comparedThrough(lines('a'), false, lines(), false)).toBeUndefined();
    expect(mergeBatches(lines('a', 'c'), lines('b', 'd'), 'c')).toEqual([
      { id: 'a', change: 'removed' },
      { id: 'b', change: 'added' },
      { id: 'c', change: 'removed' },
    ]);
  });
});
