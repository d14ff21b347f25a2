import { describe, expect, it } from 'vitest';
import { CRASH_LIMIT, restartDelayMs } from '../../src/workers/primary.ts';
import { shareOf } from '../../src/workers/share.ts';

describe('shareOf: a machine-wide total shared out among workers', () => {
  it('adds up to the total, the remainder going to the first workers', () => {
    for (const [total, workers] of [[8, 1], [8, 2], [8, 3], [10, 4], [64, 16], [17, 5]] as const) {
      const parts = Array.from({ length: workers }, (_, i) => shareOf(total, workers, i));
      expect(parts.reduce((a, b) => a + b, 0), `${total}/${workers}`).toBe(total);
      expect(Math.max(...parts) - Math.min(...parts)).toBeLessThanOrEqual(1);
      expect(parts).toEqual([...parts].sort((a, b) => b - a));
    }
  });

  it('gives every worker at least the minimum when the total is smaller than the workers', () => {
    expect(Array.from({ length: 16 }, (_, i) => shareOf(8, 16, i))).toEqual(Array(16).fill(1));
    expect(shareOf(3, 4, 3, 0)).toBe(0);
  });
});

describe('restart backoff', () => {
  it('doubles from 100 ms with each crash of the window, at most 5 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(restartDelayMs)).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000]);
    expect(CRASH_LIMIT).toBeGreaterThan(1);
  });
});
