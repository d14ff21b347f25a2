/**
 * The activity body and answer (src/query/activity.ts): sides by entity kind, the 7 × 24 grid
 * from `weekHour` buckets, an entity never its own opponent; `weekHourOf` Monday first, UTC.
 */
import { describe, expect, it } from 'vitest';
import { activityOf, toActivityBody } from '../../src/query/activity.ts';
import { weekHourOf } from '../../src/indices/timeline.ts';

const params = { id: 'tribe:s:1', kind: 'tribe' as const, environment: 's', scope: { kind: 'all' as const } };
const buckets = (pairs: [string | number, number][]) => ({ buckets: pairs.map(([key, doc_count]) => ({ key, doc_count })) });
const side = (count: number, hours: [number, number][], opponents: [string, number][]) => ({
  doc_count: count,
  npc: { doc_count: 1 },
  lossTypes: buckets([['Ship', count]]),
  hours: buckets(hours),
  systems: buckets([['system:s:9', count]]),
  opponents: buckets(opponents),
});

describe('activity', () => {
  it('splits a tribe into kills and losses by its members, a system into its killmails', () => {
    const aggs = toActivityBody(params, 6).aggs!;
    expect(Object.keys(aggs).sort()).toEqual(['first', 'kills', 'last', 'losses']);
    expect(aggs.kills!.filter).toEqual({ term: { killerTribeIds: 'tribe:s:1' } });
    expect(aggs.losses!.filter).toEqual({ term: { victimTribeIds: 'tribe:s:1' } });
    expect(Object.keys(toActivityBody({ ...params, id: 'system:s:9', kind: 'system' }, 6).aggs!).sort()).toEqual(['first', 'killmails', 'last']);
  });

  it('draws the grid from the week hours and leaves the entity out of its opponents', () => {
    const answer = activityOf(params, {
      kills: side(3, [[0, 2], [167, 1]], [['tribe:s:1', 5], ['tribe:s:2', 3]]),
      losses: side(0, [], []),
      first: { value: 1, value_as_string: '2026-06-01T00:00:00.000Z' },
      last: { value: null },
    });
    expect(answer.kills!.grid[0]![0]).toBe(2);
    expect(answer.kills!.grid[6]![23]).toBe(1);
    expect(answer.kills!.grid.flat().reduce((a, b) => a + b, 0)).toBe(3);
    expect(answer.kills!.opponents).toEqual([{ id: 'tribe:s:2', count: 3 }]);
    expect([answer.first, answer.last]).toEqual(['2026-06-01T00:00:00.000Z', null]);
  });

  it('numbers the hours of a week from Monday 00:00 UTC', () => {
    expect(weekHourOf(Date.parse('2026-06-29T00:30:00Z'))).toBe(0); // a Monday
    expect(weekHourOf(Date.parse('2026-06-28T23:59:59Z'))).toBe(167); // the Sunday before
  });
});
