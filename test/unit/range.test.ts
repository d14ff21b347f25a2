import { describe, expect, it } from 'vitest';
import { parseRange } from '../../src/http/range.ts';

describe('parseRange', () => {
  it.each([
    ['bytes=0-99', 1000, { start: 0, end: 99 }],
    ['bytes=900-', 1000, { start: 900, end: 999 }],
    ['bytes=-100', 1000, { start: 900, end: 999 }],
    ['bytes=-5000', 1000, { start: 0, end: 999 }],
    ['bytes=990-5000', 1000, { start: 990, end: 999 }],
    ['BYTES = 1 - 1', 1000, { start: 1, end: 1 }],
  ])('%s of %i bytes', (header, size, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });

  it.each([['bytes=1000-'], ['bytes=5000-6000'], ['bytes=-0']])('%s is unsatisfiable', (header) => {
    expect(parseRange(header, 1000)).toBe('unsatisfiable');
  });

  it('treats any range of an empty file as unsatisfiable', () => {
    expect(parseRange('bytes=0-', 0)).toBe('unsatisfiable');
  });

  it.each([[undefined], [''], ['bytes=-'], ['bytes=5-1'], ['bytes=0-1,5-6'], ['items=0-1'], ['bytes=a-b']])('ignores %s', (header) => {
    expect(parseRange(header, 1000)).toBeUndefined();
  });
});
