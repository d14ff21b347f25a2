import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.ts';
import { checkPosition, cursorScope, decodeCursor, encodeCursor, mac } from '../../src/query/cursor.ts';
import { sortKinds } from '../../src/query/list.ts';

const scope = cursorScope('/v1/entities', { environment: 'stillness', q: undefined, scope: { kind: 'default' } });
const KEY = 'test-key';
/** A token with this payload, signed with `key` as the codec does (for tokens the codec would never issue). */
function signed(payload: unknown, key = KEY, text = JSON.stringify(payload)): string {
  const body = Buffer.from(text).toString('base64url');
  return `${body}.${createHmac('sha256', key).update(body).digest().subarray(0, 16).toString('base64url')}`;
}

function badCursor(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected a 400');
}

describe('cursor codec', () => {
  it('round-trips sort values in any script, as URL-safe text', () => {
    const cursor = { generation: '20261122225520739-052c2d3e', after: ['北京 🚀 zeta', 'character:stillness:1', 3.25, null] };
    const encoded = encodeCursor(cursor, scope, KEY);
    expect(encoded).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(decodeCursor(encoded, scope, KEY)).toEqual(cursor);
    // The helper below signs exactly as the codec does, so the refusals it builds test decoding, not signing.
    expect(signed({ v: 2, s: scope, g: cursor.generation, a: cursor.after })).toBe(encoded);
  });

  it('binds a cursor to its route and filters', () => {
    const encoded = encodeCursor({ generation: 'g1', after: ['a', 'b'] }, scope, KEY);
    const other = cursorScope('/v1/entities', { environment: 'utopia', scope: { kind: 'default' } });
    const error = badCursor(() => decodeCursor(encoded, other, KEY));
    expect(error.status).toBe(400);
    expect(error.code).toBe('bad_request');
    expect(error.details).toEqual({ parameter: 'cursor' });
    expect(cursorScope('/v1/characters', { environment: 'stillness' })).not.toBe(cursorScope('/v1/tribes', { environment: 'stillness' }));
  });

  it('ignores parameter order and undefined values in the binding', () => {
    expect(cursorScope('/r', { a: 1, b: undefined, c: 'x' })).toBe(cursorScope('/r', { c: 'x', a: 1 }));
  });

  it('refuses an edited position even with the binding kept, and a cursor signed with another key', () => {
    const encoded = encodeCursor({ generation: 'g1', after: ['2026-06-30T04:41:45.777Z', 'event:x:0'] }, scope, KEY);
    const [payload, tag] = encoded.split('.') as [string, string];
    const edited = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    edited.a[0] = 'zzz';
    const forged = `${Buffer.from(JSON.stringify(edited)).toString('base64url')}.${tag}`;
    expect(badCursor(() => decodeCursor(forged, scope, KEY)).message).toMatch(/altered/);
    expect(badCursor(() => decodeCursor(encoded, scope, 'another-key')).details).toEqual({ parameter: 'cursor' });
    expect(badCursor(() => decodeCursor(payload, scope, KEY)).details).toEqual({ parameter: 'cursor' });
  });

  it('signs with HMAC-SHA256, as createHmac computes it, for keys shorter and longer than a block and in any script', () => {
    const payloads = ['', 'eyJ2IjoyfQ', 'x'.repeat(1000)];
    for (const key of [KEY, '', 'k', 'k'.repeat(64), 'k'.repeat(65), 'k'.repeat(500), 'ключ-鍵-🔑'.repeat(9)]) {
      for (const payload of payloads) expect(mac(payload, key)).toEqual(createHmac('sha256', key).update(payload).digest().subarray(0, 16));
    }
  });

  it.each([
    ['not base64url', 'a+b/c=.x'],
    ['not JSON', `${Buffer.from('nope').toString('base64url')}.${'A'.repeat(22)}`],
    ['signed, but not JSON', signed(undefined, KEY, 'nope')],
    ['a JSON array', signed([1])],
    ['another version', signed({ v: 1, s: scope, g: 'g1', a: ['a', 'b'] })],
    ['no generation', signed({ v: 2, s: scope, a: ['a', 'b'] })],
    ['no position', signed({ v: 2, s: scope, g: 'g1', a: 'a' })],
    ['the reference worker cursor', Buffer.from(JSON.stringify({ key: 'Zeta | x', id: 'x' })).toString('base64')],
    ['a cursor of the previous version', Buffer.from(JSON.stringify({ v: 1, s: scope, g: 'g1', a: ['a', 'b'] })).toString('base64url')],
    ['far too long', `${'A'.repeat(5000)}.AAAA`],
  ])('refuses %s with 400 naming cursor', (_name, raw) => {
    const error = badCursor(() => decodeCursor(raw, scope, KEY));
    expect(error.status).toBe(400);
    expect(error.details).toEqual({ parameter: 'cursor' });
  });
});

describe('cursor position', () => {
  const byScore = sortKinds([{ _score: { order: 'desc' } }, { id: { order: 'asc' } }]);
  const byLabel = sortKinds([{ label: { order: 'asc' } }, { id: { order: 'asc' } }]);
  const byTime = sortKinds([{ occurredAt: { order: 'desc', format: 'strict_date_optional_time_nanos' } }, { id: { order: 'desc' } }]);

  it('reads the kinds of a sort: a score, an instant (nanos format), keyword text', () => {
    expect(byScore).toEqual(['score', 'keyword']);
    expect(byLabel).toEqual(['keyword', 'keyword']);
    expect(byTime).toEqual(['instant', 'keyword']);
  });

  it('accepts instants as Elasticsearch formats them, at any fraction length, within date_nanos range', () => {
    for (const at of ['2026-06-30T04:41:45Z', '2026-06-30T04:41:45.777Z', '2026-06-30T04:41:45.123456789Z', '1970-01-01T00:00:00Z', '2262-04-11T23:47:16.854775807Z']) {
      expect(checkPosition([at, 'event:x:0'], byTime), at).toEqual([at, 'event:x:0']);
    }
  });

  it('accepts positions that fit the sort, a missing field included', () => {
    expect(checkPosition([12.5, 'character:stillness:1'], byScore)).toEqual([12.5, 'character:stillness:1']);
    expect(checkPosition([null, 'x'], byLabel)).toEqual([null, 'x']);
  });

  it.each([
    ['too few values', ['a'], byLabel],
    ['too many values', ['a', 'b', 'c'], byLabel],
    ['text where the score goes', ['zeta', 'x'], byScore],
    ['an infinite score', [Number.POSITIVE_INFINITY, 'x'], byScore],
    ['a number where text goes', [1, 'x'], byLabel],
    ['an object', ['a', {}], byLabel],
    ['a null tiebreaker', [null, null], byLabel],
    ['text where an instant goes', ['zzz', 'x'], byTime],
    ['null where an instant goes', [null, 'x'], byTime],
    ['a number where an instant goes', [1782000000000, 'x'], byTime],
    ['an instant before 1970', ['1969-12-31T23:59:59Z', 'x'], byTime],
    ['an instant after 2262', ['2262-04-11T23:47:16.854775808Z', 'x'], byTime],
    ['the year 9999', ['9999-01-01T00:00:00Z', 'x'], byTime],
    ['the 30th of February', ['2026-02-30T00:00:00Z', 'x'], byTime],
    ['an instant with an offset', ['2026-06-30T04:41:45+02:00', 'x'], byTime],
    ['ten fraction digits', ['2026-06-30T04:41:45.1234567890Z', 'x'], byTime],
  ])('refuses %s with 400 naming cursor', (_name, after, kinds) => {
    const error = badCursor(() => checkPosition(after as unknown[], kinds));
    expect(error.details).toEqual({ parameter: 'cursor' });
  });
});
