import { describe, expect, it } from 'vitest';
import { cycleAt, declaredCycle } from '../../src/indices/cycle.ts';
import { calendarMs, toInstant } from '../../src/time/instant.ts';
import { checkPosition } from '../../src/query/cursor.ts';
import { toTimeBound } from '../../src/query/time-range.ts';
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

  it('refuses what Date.parse would read loosely: a day the month lacks, prose, no zone, an HTTP date', () => {
    for (const loose of ['2026-02-30T00:00:00Z', 'March 3 2026', '2026-06-30T23:50:00', 'Tue, 30 Jun 2026 23:50:00 GMT', '2026-06-30T24:00:00Z']) {
      expect(toInstant(loose)).toBeUndefined();
    }
    expect(Date.parse('2026-02-30T00:00:00Z')).toBe(Date.parse('2026-03-02T00:00:00Z'));
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

describe('one strict instant parser, four grammars', () => {
  const IMPOSSIBLE = ['2026-02-30T00:00:00Z', '2025-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-06-01T24:00:00Z', '2026-06-01T25:00:00Z', '2026-06-01T10:60:00Z', '2026-06-01T10:00:60Z', '2026-13-01T00:00:00Z', '2026-00-10T00:00:00Z', '2026-06-00T00:00:00Z', '2026-06-01T10:00:00+24:00', '2026-06-01T10:00:00+05:60'];

  it('the calendar check: real times only, a leap day only in a leap year', () => {
    expect(calendarMs({ year: 2024, month: 2, day: 29, hour: 0, minute: 0, second: 0 })).toBe(Date.parse('2024-02-29T00:00:00Z'));
    expect(calendarMs({ year: 2026, month: 2, day: 29, hour: 0, minute: 0, second: 0 })).toBeUndefined();
    expect(calendarMs({ year: 2026, month: 6, day: 1, hour: 9, minute: 30, second: 0, offset: { sign: '+', hours: 2, minutes: 0 } })).toBe(Date.parse('2026-06-01T07:30:00Z'));
  });

  it('the loader refuses impossible dates (a row with one is refused with file:line)', () => {
    for (const text of IMPOSSIBLE) expect(toInstant(text), text).toBeUndefined();
    expect(toInstant('2026-02-28 23:59:59.5z')?.text).toBe('2026-02-28T23:59:59.500000000Z');
  });

  it('since/until/since_indexed refuse them with a 400 naming the parameter', () => {
    for (const text of IMPOSSIBLE) expect(() => toTimeBound('since', text), text).toThrow(/since must be a real ISO 8601 instant/);
    expect(toTimeBound('until', '2024-02-29T23:00:00-01:00').at).toBe('2024-03-01T00:00:00.000000000Z');
  });

  it('cursors refuse a position holding one', () => {
    expect(() => checkPosition(['2026-02-30T00:00:00.000000000Z', 'event:x'], ['instant', 'keyword'])).toThrow(/cursor/);
    expect(checkPosition(['2026-02-28T00:00:00.000000000Z', 'event:x'], ['instant', 'keyword'])).toEqual(['2026-02-28T00:00:00.000000000Z', 'event:x']);
  });

  it('CYCLE_STARTS refuses them at start-up, naming the variable', () => {
    expect(() => parseCycleStarts('5=2026-02-30T09:00:00Z')).toThrow(/CYCLE_STARTS/);
    expect(() => parseCycleStarts('5=2026-03-11T09:00:00')).toThrow(/CYCLE_STARTS/);
    expect(parseCycleStarts('5=2026-03-11T10:00:00.250+01:00')[0]!.startsAtMs).toBe(Date.parse('2026-03-11T09:00:00.250Z'));
  });
});
