/** The figures `npm run cluster` reports: nearest-rank percentiles and per-phase summaries. */
import { describe, expect, it } from 'vitest';
import { percentile, type Sample, summarize } from '../../scripts/read-load.ts';

describe('percentile', () => {
  const values = Array.from({ length: 100 }, (_, i) => i + 1);
  it.each([
    [50, 50],
    [99, 99],
    [100, 100],
    [1, 1],
    [0, 1],
  ])('p%i of 1..100 is %i', (p, expected) => {
    expect(percentile(values, p)).toBe(expected);
  });

  it('is the only value of one sample and 0 of none', () => {
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 99)).toBe(0);
  });
});

describe('summarize', () => {
  const sample = (at: number, ms: number, status: number, note?: string): Sample => ({ at, ms, path: '/v1/x', status, ok: status === 200, note });
  const samples = [sample(0, 10, 200, 'green'), sample(500, 30, 200, 'green'), sample(1000, 20, 503, 'yellow'), sample(1500, 40, 0), sample(2000, 99, 200)];

  it('counts only the samples sent in [from, to)', () => {
    expect(summarize(samples, 500, 2000)).toEqual({
      seconds: 1.5,
      requests: 3,
      failures: 2,
      failedStatuses: { 503: 1, 0: 1 },
      p50Ms: 30,
      p99Ms: 40,
      maxMs: 40,
      notes: { green: 1, yellow: 1 },
    });
  });

  it('reports an empty phase as zeros', () => {
    expect(summarize(samples, 5000, 6000)).toMatchObject({ requests: 0, failures: 0, p50Ms: 0, p99Ms: 0, maxMs: 0 });
  });
});
