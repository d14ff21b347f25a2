import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.ts';
import { checkPosition, cursorScope, decodeCursor, encodeCursor } from '../../src/query/cursor.ts';
import { sortKinds } from '../../src/query/list.ts';

const scope = cursorScope('/v1/entities', { environment: 'stillness', q: undefined, scope: { kind: 'default' } });

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
    const encoded = encodeCursor(cursor, scope);
    expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(encoded, scope)).toEqual(cursor);
  });

  it('binds a cursor to its route and filters', () => {
    const encoded = encodeCursor({ generation: 'g1', after: ['a', 'b'] }, scope);
    const other = cursorScope('/v1/entities', { environment: 'utopia', scope: { kind: 'default' } });
    const error = badCursor(() => decodeCursor(encoded, other));
    expect(error.status).toBe(400);
    expect(error.code).toBe('bad_request');
    expect(error.details).toEqual({ parameter: 'cursor' });
    expect(cursorScope('/v1/characters', { environment: 'stillness' })).not.toBe(cursorScope('/v1/tribes', { environment: 'stillness' }));
  });

  it('ignores parameter order and undefined values in the binding', () => {
    expect(cursorScope('/r', { a: 1, b: undefined, c: 'x' })).toBe(cursorScope('/r', { c: 'x', a: 1 }));
  });

  it.each([
    ['not base64url', 'a+b/c='],
    ['not JSON', Buffer.from('nope').toString('base64url')],
    ['a JSON array', Buffer.from('[1]').toString('base64url')],
    ['another version', Buffer.from(JSON.stringify({ v: 2, s: scope, g: 'g1', a: ['a', 'b'] })).toString('base64url')],
    ['no generation', Buffer.from(JSON.stringify({ v: 1, s: scope, a: ['a', 'b'] })).toString('base64url')],
    ['no position', Buffer.from(JSON.stringify({ v: 1, s: scope, g: 'g1', a: 'a' })).toString('base64url')],
    ['the reference worker cursor', Buffer.from(JSON.stringify({ key: 'Zeta | x', id: 'x' })).toString('base64')],
    ['far too long', 'A'.repeat(5000)],
  ])('refuses %s with 400 naming cursor', (_name, raw) => {
    const error = badCursor(() => decodeCursor(raw, scope));
    expect(error.status).toBe(400);
    expect(error.details).toEqual({ parameter: 'cursor' });
  });
});

describe('cursor position', () => {
  const byScore = sortKinds([{ _score: { order: 'desc' } }, { id: { order: 'asc' } }]);
  const byLabel = sortKinds([{ label: { order: 'asc' } }, { id: { order: 'asc' } }]);

  it('reads the kinds of a sort: score is a number, every field is text', () => {
    expect(byScore).toEqual(['number', 'text']);
    expect(byLabel).toEqual(['text', 'text']);
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
  ])('refuses %s with 400 naming cursor', (_name, after, kinds) => {
    const error = badCursor(() => checkPosition(after as unknown[], kinds));
    expect(error.details).toEqual({ parameter: 'cursor' });
  });
});
