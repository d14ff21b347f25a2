import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.ts';
import { parseCycleScope, scopeCycles } from '../../src/query/scope.ts';

describe('cycle scope (specification table)', () => {
  it.each([
    [undefined, undefined, [6, 0]],
    ['', undefined, [6, 0]],
    ['current', undefined, [6]],
    ['CURRENT', undefined, [6]],
    ['all', undefined, undefined],
    ['5,6', undefined, [5, 6]],
    [' 6 ', undefined, [6]],
    ['6,6,5', undefined, [5, 6]],
    [undefined, '5', [5]],
    [undefined, 'current', [6]],
    ['', '5', [5]],
  ])('cycles=%s cycle=%s admits %j', (cycles, cycle, expected) => {
    expect(scopeCycles(parseCycleScope(cycles, cycle), 6)).toEqual(expected);
  });

  it.each([
    ['6', '6', 'cycles'],
    ['abc', undefined, 'cycles'],
    ['6,', undefined, 'cycles'],
    ['06', undefined, 'cycles'],
    ['0', undefined, 'cycles'],
    ['-1', undefined, 'cycles'],
    ['5;6', undefined, 'cycles'],
    [undefined, 'all', 'cycle'],
    [undefined, '5,6', 'cycle'],
  ])('cycles=%s cycle=%s is a 400 naming %s', (cycles, cycle, parameter) => {
    let error: unknown;
    try {
      parseCycleScope(cycles, cycle);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    expect((error as ApiError).details).toEqual({ parameter });
  });
});
