/** The one walk over a row file's lines (loader/read-lines.ts): every reader of row files takes its lines, ends and blank rule from it. */
import { describe, expect, it } from 'vitest';
import { LoadError } from '../../loader/errors.ts';
import { blankRow, rowLinesOf } from '../../loader/read-lines.ts';

const chunk = (text: string, firstLine = 1) => ({ bytes: Buffer.from(text), firstLine, lines: 0 });

describe('rowLinesOf', () => {
  it('gives every line in order with where it ends, blank ones marked where they stand', () => {
    const lines = rowLinesOf(chunk('{"a":1}\r\n  \n{"b":2}\n\n{"c":3}', 7), 'f.jsonl', false);
    expect(lines.map(({ text, line, end, blank }) => ({ text, line, end, blank }))).toEqual([
      { text: '{"a":1}', line: 7, end: 9, blank: false },
      { text: '  ', line: 8, end: 12, blank: true },
      { text: '{"b":2}', line: 9, end: 20, blank: false },
      { text: '', line: 10, end: 21, blank: true },
      { text: '{"c":3}', line: 11, end: 28, blank: false },
    ]);
  });

  it('refuses a blank line in a file the registry shape-checks, naming file and line', () => {
    expect(() => rowLinesOf(chunk('{"a":1}\n\n'), 'entities.jsonl', true)).toThrow(LoadError);
    expect(() => rowLinesOf(chunk('{"a":1}\n\n'), 'entities.jsonl', true)).toThrow(/entities\.jsonl:2: blank line/);
    expect(blankRow({ text: ' ', bytes: Buffer.from(' '), line: 3 }, 'relations.jsonl', false)).toBe(true);
  });
});
