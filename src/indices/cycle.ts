/**
 * Cycles as the index stores them.
 *
 * Uncycled rows are indexed with cycle 0, so "current cycle + uncycled" is one `terms`
 * filter on one field. The export never writes 0 (its schema minimum is 1); a row that
 * does is treated as uncycled, like a missing or null key.
 */
import type { CycleStart } from '../config.ts';

/** The value indexed for rows that belong to no cycle. */
export const UNCYCLED = 0;

/** The cycle a row declares, or UNCYCLED. */
export function declaredCycle(value: unknown): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 ? n : UNCYCLED;
}

/** The cycle an instant falls in, given boundaries sorted by start; UNCYCLED before the first. */
export function cycleAt(ms: number | undefined, starts: readonly CycleStart[]): number {
  if (ms === undefined) return UNCYCLED;
  let cycle = UNCYCLED;
  for (const start of starts) {
    if (ms >= start.startsAtMs) cycle = start.cycle;
  }
  return cycle;
}
