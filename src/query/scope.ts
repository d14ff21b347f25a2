/**
 * Cycle scope, exactly as the specification says:
 * - neither `cycles` nor `cycle`: the current cycle plus uncycled rows;
 * - `cycles=current`: strictly the current cycle; `cycles=all`: no cycle filter;
 * - `cycles=5,6`: those cycles only; `cycle=6`: that cycle only;
 * - both given, or anything malformed: 400 naming the parameter.
 * An empty value counts as absent, so `cycles=&cycle=5` means cycle 5.
 */
import { ApiError } from '../errors.ts';
import { UNCYCLED } from '../indices/cycle.ts';

export type CycleScope =
  | { kind: 'default' }
  | { kind: 'current' }
  | { kind: 'all' }
  | { kind: 'cycles'; cycles: number[] };

const CYCLE = /^[1-9]\d{0,5}$/;

export function parseCycleScope(cycles: string | undefined, cycle: string | undefined): CycleScope {
  const list = cycles?.trim() || undefined;
  const one = cycle?.trim() || undefined;
  if (list !== undefined && one !== undefined) {
    throw ApiError.badParameter('cycles', 'Give either cycles or cycle, not both.');
  }
  if (one !== undefined) {
    if (one.toLowerCase() === 'current') return { kind: 'current' };
    if (!CYCLE.test(one)) throw ApiError.badParameter('cycle', `cycle must be a cycle number or current, got "${one}".`);
    return { kind: 'cycles', cycles: [Number(one)] };
  }
  if (list === undefined) return { kind: 'default' };
  const lower = list.toLowerCase();
  if (lower === 'current') return { kind: 'current' };
  if (lower === 'all') return { kind: 'all' };
  const parts = list.split(',').map((p) => p.trim());
  if (!parts.every((p) => CYCLE.test(p))) {
    throw ApiError.badParameter('cycles', `cycles must be current, all or a comma-separated list of cycle numbers, got "${list}".`);
  }
  return { kind: 'cycles', cycles: [...new Set(parts.map(Number))].sort((a, b) => a - b) };
}

/** The `cycle` values a scope admits (undefined = no filter), given the generation's current cycle. */
export function scopeCycles(scope: CycleScope, currentCycle: number): number[] | undefined {
  switch (scope.kind) {
    case 'default':
      return [currentCycle, UNCYCLED];
    case 'current':
      return [currentCycle];
    case 'all':
      return undefined;
    case 'cycles':
      return scope.cycles;
  }
}
