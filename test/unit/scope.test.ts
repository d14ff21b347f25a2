import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.ts';
import { readQuery } from '../../src/query/parameters.ts';
import { CYCLE, CYCLES, scopeCycles, scopeOf } from '../../src/query/scope.ts';

/** The scope of a raw `cycles`/`cycle` pair, as a list route reads it. */
const scopeFor = (cycles: string | undefined, cycle: string | undefined) => scopeOf(readQuery({ cycles, cycle }, [CYCLES, CYCLE]));

describe('cycle scope (specification table)', () => {
  it.each([
    [undefined, undefined, [6, 0]],
    ['', undefined, [6, 0]],
    ['current', undefined, [6]],
    ['CURRENT', undefined, [6]],
    ['All', undefined, undefined],
    ['all', undefined, undefined],
    ['5,6', undefined, [5, 6]],
    ['5 , 6', undefined, [5, 6]],
    [' 6 ', undefined, [6]],
    ['6,6,5', undefined, [5, 6]],
    [undefined, '5', [5]],
    [undefined, 'current', [6]],
    [undefined, 'Current', [6]],
    ['', '5', [5]],
    [' ', '5', [5]],
  ])('cycles=%s cycle=%s admits %j', (cycles, cycle, expected) => {
    expect(scopeCycles(scopeFor(cycles, cycle), 6)).toEqual(expected);
  });

  it.each([
    ['6', '6', 'cycles'],
    ['6', 'abc', 'cycles'],
    ['abc', '6', 'cycles'],
    ['abc', undefined, 'cycles'],
    ['6,', undefined, 'cycles'],
    ['5,,6', undefined, 'cycles'],
    ['06', undefined, 'cycles'],
    ['0', undefined, 'cycles'],
    ['-1', undefined, 'cycles'],
    ['5;6', undefined, 'cycles'],
    ['٥', undefined, 'cycles'],
    ['1234567', undefined, 'cycles'],
    ['currently', undefined, 'cycles'],
    [undefined, 'all', 'cycle'],
    [undefined, '5,6', 'cycle'],
  ])('cycles=%s cycle=%s is a 400 naming %s', (cycles, cycle, parameter) => {
    let error: unknown;
    try {
      scopeFor(cycles, cycle);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    expect((error as ApiError).details).toEqual({ parameter });
  });
});
