import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.ts';
import { MAX_Q_LENGTH, parseBoolean, parseLimit, parseProfile, parseQ, takeParams } from '../../src/query/params.ts';

function rejected(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a 400');
}

describe('query parameters', () => {
  it('limit: default 50, clamped to 200, else 400', () => {
    expect(parseLimit(undefined)).toBe(50);
    expect(parseLimit('')).toBe(50);
    expect(parseLimit('7')).toBe(7);
    expect(parseLimit('200')).toBe(200);
    expect(parseLimit('500')).toBe(200);
    for (const bad of ['0', '-1', 'abc', '10abc', '1.5', ' ']) {
      if (bad.trim() === '') continue;
      expect(rejected(() => parseLimit(bad)).details).toEqual({ parameter: 'limit' });
    }
  });

  it('booleans are exactly true or false', () => {
    expect(parseBoolean('npc', 'true')).toBe(true);
    expect(parseBoolean('npc', 'false')).toBe(false);
    expect(parseBoolean('npc', undefined)).toBeUndefined();
    for (const bad of ['1', 'TRUE', 'yes', 'no']) expect(rejected(() => parseBoolean('npc', bad)).details).toEqual({ parameter: 'npc' });
  });

  it('q: trimmed, blank means absent, bounded', () => {
    expect(parseQ('  zeta ')).toBe('zeta');
    expect(parseQ('')).toBeUndefined();
    expect(parseQ('   ')).toBeUndefined();
    expect(parseQ(undefined)).toBeUndefined();
    expect(rejected(() => parseQ('x'.repeat(MAX_Q_LENGTH + 1))).details).toEqual({ parameter: 'q' });
  });

  it('refuses unknown and repeated parameters, naming them', () => {
    expect(takeParams({ limit: '5' }, ['limit'])).toEqual({ limit: '5' });
    expect(rejected(() => takeParams({ limti: '5' }, ['limit'])).details).toEqual({ parameter: 'limti' });
    expect(rejected(() => takeParams({ limit: ['5', '6'] }, ['limit'])).details).toEqual({ parameter: 'limit' });
  });

  it('profile is known or placeholder', () => {
    expect(parseProfile('known')).toBe('known');
    expect(parseProfile(undefined)).toBeUndefined();
    expect(rejected(() => parseProfile('verified')).details).toEqual({ parameter: 'profile' });
  });
});
