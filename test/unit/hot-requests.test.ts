/** The searches a new generation is warmed with (src/search/hot-requests.ts): the expensive ones, most asked first, following what is asked now. */
import { expect, it } from 'vitest';
import { HotRequests, isExpensive } from '../../src/search/hot-requests.ts';

const kinds = { size: 0, track_total_hits: true, aggs: { groups: { terms: { field: 'kind' } } } };
const days = { size: 0, track_total_hits: true, aggs: { buckets: { date_histogram: { field: 'occurredAt', calendar_interval: 'day' as const } } } };
const counted = { size: 25, track_total_hits: 10_000, sort: [{ occurredAt: 'desc' }] };

it('keeps aggregations and pages that count their rows, not plain pages nor reads by id', () => {
  expect(isExpensive(kinds, false)).toBe(true);
  expect(isExpensive(counted, true)).toBe(true);
  expect(isExpensive({ ...counted, track_total_hits: false }, true)).toBe(false);
  expect(isExpensive({ size: 3, query: { ids: { values: ['a'] } } }, false)).toBe(false);
  expect(isExpensive({ size: 0, track_total_hits: false, suggest: {} }, false)).toBe(false);
});

it('gives the most asked first, as exact copies of what was asked, and halves the counts each time', () => {
  const hot = new HotRequests();
  for (let i = 0; i < 3; i++) hot.record('events', kinds, false);
  hot.record('events', days, false);
  for (let i = 0; i < 2; i++) hot.record('killmails', counted, true);
  hot.record('events', { size: 5 }, true);
  expect(hot.size).toBe(3);
  const first = hot.take(2);
  expect(first.map((r) => [r.index, r.body, r.rows, r.asks])).toEqual([['events', kinds, false, 3], ['killmails', counted, true, 2]]);
  // Then what is asked now counts as much as what was asked before.
  for (let i = 0; i < 2; i++) hot.record('events', days, false);
  expect(hot.take(3).map((r) => [r.index, r.asks])).toEqual([['events', 3], ['events', 2], ['killmails', 1]]);
});
