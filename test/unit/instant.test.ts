import { describe, expect, it } from 'vitest';
import { cycleAt, declaredCycle } from '../../src/indices/cycle.ts';
import { toInstant } from '../../src/indices/instant.ts';
import { parseCycleStarts } from '../../src/config.ts';

describe('instants', () => {
  it('normalises any fraction and offset to UTC nanoseconds', () => {
    expect(toInstant('2026-06-28T21:47:05Z')?.text).toBe('2026-06-28T21:47:05.000000000Z');
    expect(toInstant('2026-06-28T21:47:05.5Z')?.text).toBe('2026-06-28T21:47:05.500000000Z');
    expect(toInstant('2026-06-29T07:47:05.123456789+10:00')?.text).toBe('2026-06-28T21:47:05.123456789Z');
    expect(toInstant('2026-06-28T20:47:05.1-01:00')?.ms).toBe(Date.parse('2026-06-28T21:47:05.1Z'));
  });

  it('orders as instants where text order is wrong', () => {
    const a = toInstant('2026-06-29T07:00:00+10:00')!; // 21:00 the day before
    const b = toInstant('2026-06-28T22:00:00Z')!;
    expect(a.text < b.text).toBe(true);
    expect('2026-06-29T07:00:00+10:00' < '2026-06-28T22:00:00Z').toBe(false);
  });

  it('clamps what date_nanos cannot hold and refuses non-timestamps', () => {
    expect(toInstant('0001-01-01T00:00:00Z')?.text).toBe('1970-01-01T00:00:00.000000000Z');
    expect(toInstant('9999-12-31T23:59:59Z')?.text).toBe('2262-04-11T23:47:16.854775807Z');
    for (const bad of ['', 'yesterday', '2026-06-28', 42, null, '2026-06-28T21:47:05.1234567891Z']) expect(toInstant(bad)).toBeUndefined();
  });
});

describe('cycles', () => {
  const starts = parseCycleStarts('6=2026-06-25T09:00:00Z,5=2026-03-11T09:00:00Z');
  it('derives the cycle of an instant from configured starts', () => {
    expect(cycleAt(Date.parse('2026-03-11T08:59:59.999Z'), starts)).toBe(0);
    expect(cycleAt(Date.parse('2026-03-11T09:00:00Z'), starts)).toBe(5);
    expect(cycleAt(Date.parse('2026-06-25T09:00:00Z'), starts)).toBe(6);
    expect(cycleAt(undefined, starts)).toBe(0);
  });
  it('reads declared cycles; missing, null, 0 and junk are uncycled', () => {
    expect(declaredCycle(6)).toBe(6);
    expect(declaredCycle('5')).toBe(5);
    for (const v of [undefined, null, 0, -1, 'x', 1.5]) expect(declaredCycle(v)).toBe(0);
  });
});
