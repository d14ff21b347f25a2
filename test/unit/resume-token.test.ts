/** Resume tokens of the event streams: they round-trip, order positions as Elasticsearch orders rows, and trust nothing. */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.ts';
import { mac } from '../../src/query/cursor.ts';
import { type Position, comparePositions, decodeResumeToken, encodeResumeToken, isAfter, rowPosition, searchAfter } from '../../src/stream/resume-token.ts';

const KEY = 'test-key';
const row = rowPosition(['2026-06-30T05:10:00.1Z', '2026-06-29T22:23:17.695Z', 'killmail:stillness:50000']);
const instant: Position = { indexedAt: '2026-06-30T05:10:00.100000000Z' };

function rejects(raw: string, feed = 'killmails'): void {
  try {
    decodeResumeToken(raw, feed, KEY);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    expect((error as ApiError).details).toEqual({ parameter: 'Last-Event-ID' });
    return;
  }
  throw new Error(`accepted ${raw}`);
}

describe('resume tokens', () => {
  it('round-trip a row position and an instant alone, instants as nine-digit text', () => {
    expect(row).toEqual({ indexedAt: '2026-06-30T05:10:00.100000000Z', row: { occurredAt: '2026-06-29T22:23:17.695000000Z', id: 'killmail:stillness:50000' } });
    for (const position of [row, instant]) expect(decodeResumeToken(encodeResumeToken(position, 'killmails', KEY), 'killmails', KEY)).toEqual(position);
    expect(searchAfter(row)).toEqual(['2026-06-30T05:10:00.100000000Z', '2026-06-29T22:23:17.695000000Z', 'killmail:stillness:50000']);
    expect(searchAfter(instant)).toBeUndefined();
  });

  it('orders positions by instant, then occurredAt, then id bytes; an instant alone after every row at it', () => {
    const at = (indexedAt: string, occurredAt: string, id: string) => rowPosition([indexedAt, occurredAt, id]);
    const sorted = [
      at('2026-06-30T05:10:00Z', '2026-06-29T00:00:00Z', 'b'),
      at('2026-06-30T05:10:00.1Z', '2026-06-28T00:00:00Z', 'z'),
      at('2026-06-30T05:10:00.1Z', '2026-06-29T00:00:00Z', 'a'),
      at('2026-06-30T05:10:00.1Z', '2026-06-29T00:00:00Z', 'b'),
      instant,
      at('2026-06-30T05:10:00.100000001Z', '2026-01-01T00:00:00Z', 'a'),
    ];
    for (let i = 0; i < sorted.length; i += 1) {
      for (let j = 0; j < sorted.length; j += 1) expect(Math.sign(comparePositions(sorted[i]!, sorted[j]!)), `${i} ${j}`).toBe(Math.sign(i - j));
    }
    expect(isAfter(row, instant)).toBe(false);
    expect(isAfter(instant, row)).toBe(true);
  });

  it('refuses edited, forged, foreign, other-feed and malformed tokens with a 400 naming Last-Event-ID', () => {
    const token = encodeResumeToken(row, 'killmails', KEY);
    const [payload, signature] = token.split('.') as [string, string];
    rejects(token, 'events');
    rejects(`${payload}x.${signature}`);
    rejects(`${payload}.${signature.slice(0, -2)}AA`);
    rejects(encodeResumeToken(row, 'killmails', 'another-key'));
    rejects('garbage');
    rejects(`${'a'.repeat(2000)}.${signature}`);
    // Signed with the key, yet not a position: checked all the same before any search.
    const signed = (value: unknown) => {
      const body = Buffer.from(JSON.stringify(value)).toString('base64url');
      return `${body}.${mac(body, KEY).toString('base64url')}`;
    };
    expect(decodeResumeToken(signed({ v: 1, f: 'killmails', p: ['2026-06-30T05:10:00Z'] }), 'killmails', KEY)).toEqual({ indexedAt: '2026-06-30T05:10:00.000000000Z' });
    for (const p of [[], ['2026-02-30T00:00:00Z'], ['2026-06-30T05:10:00Z', '2026-06-30T05:10:00Z'], ['2026-06-30T05:10:00Z', '2026-06-30T05:10:00Z', null], ['x', 'y', 'z'], 'p']) {
      rejects(signed({ v: 1, f: 'killmails', p }));
    }
    rejects(signed({ v: 2, f: 'killmails', p: ['2026-06-30T05:10:00Z'] }));
  });
});
