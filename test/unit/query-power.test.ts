/**
 * The pure parts of query power: instants of `since`/`until`, OR lists, `select`,
 * groups and histograms read from aggregation answers, and the count a cursor carries.
 */
import { describe, expect, it } from 'vitest';
import { rejected } from '../support/rejected.ts';
import { cursorScope, decodeCursor, encodeCursor } from '../../src/query/cursor.ts';
import { type Groups, MAX_BUCKETS, MAX_SHARD_SIZE, type TermBucket, coveringShardSize, readGroups, readHistogram, regroup, cycleGroup, keyword, topIsExact } from '../../src/query/groups.ts';
import { readValue } from '../../src/query/parameters.ts';
import { EVENT_KIND, SINCE, UNTIL } from '../../src/query/route-parameters.ts';
import { selectFields, selectParameter } from '../../src/query/select.ts';
import { toTimeBound, toTimeRange } from '../../src/query/time-range.ts';


describe('since and until', () => {
  it('normalizes any offset and fraction length to the UTC nanosecond text date_nanos compares', () => {
    expect(toTimeBound('since', '2026-06-01T00:00:00Z')).toEqual({ at: '2026-06-01T00:00:00.000000000Z', onNanosecond: true });
    expect(toTimeBound('since', '2026-06-01T02:30:00.5+02:30')).toEqual({ at: '2026-06-01T00:00:00.500000000Z', onNanosecond: true });
    expect(toTimeBound('since', '2026-05-31T23:00:00-01:00')).toEqual({ at: '2026-06-01T00:00:00.000000000Z', onNanosecond: true });
    expect(toTimeBound('until', '2026-06-01T00:00:00.1234567890000Z')).toEqual({ at: '2026-06-01T00:00:00.123456789Z', onNanosecond: true });
    expect(toTimeBound('until', '2026-06-01T00:00:00.1234567891Z')).toEqual({ at: '2026-06-01T00:00:00.123456789Z', onNanosecond: false });
  });

  it('clamps instants outside date_nanos (1970–2262), which changes no answer', () => {
    expect(toTimeBound('since', '1900-01-01T00:00:00Z').at).toBe('1970-01-01T00:00:00.000000000Z');
    expect(toTimeBound('until', '9999-12-31T23:59:59-05:00').at).toBe('2262-04-11T23:47:16.854775807Z');
  });

  it('refuses what is not a real instant, naming the parameter', () => {
    for (const bad of ['2026-02-30T00:00:00Z', '2026-06-01T24:00:00Z', '2026-06-01T00:60:00Z', '2026-06-01T00:00:00+24:00']) {
      expect(rejected(() => toTimeBound('until', bad)).details).toEqual({ parameter: 'until' });
    }
    for (const bad of ['2026-06-01', '2026-06-01T00:00:00', 'now', '2026-06-01 00:00:00Z', '1780000000']) {
      expect(rejected(() => readValue(SINCE, bad)).details).toEqual({ parameter: 'since' });
    }
  });

  it('puts an instant between two nanoseconds on the right side: since > its truncation, until <= it', () => {
    const since = toTimeBound('since', '2026-06-01T00:00:00.0000000001Z');
    const until = toTimeBound('until', '2026-06-02T00:00:00.0000000001Z');
    expect(toTimeRange('occurredAt', since, until)).toEqual([
      { range: { occurredAt: { format: 'strict_date_optional_time_nanos', gt: '2026-06-01T00:00:00.000000000Z', lte: '2026-06-02T00:00:00.000000000Z' } } },
    ]);
    expect(toTimeRange('occurredAt', readValue(SINCE, '2026-06-01T00:00:00Z'), readValue(UNTIL, '2026-06-02T00:00:00Z'))[0]).toEqual({
      range: { occurredAt: { format: 'strict_date_optional_time_nanos', gte: '2026-06-01T00:00:00.000000000Z', lt: '2026-06-02T00:00:00.000000000Z' } },
    });
    expect(toTimeRange('occurredAt', undefined, undefined)).toEqual([]);
  });
});

describe('OR lists and select', () => {
  it('reads a|b as its distinct trimmed members; an empty member is a 400', () => {
    expect(readValue(EVENT_KIND, 'a')).toEqual(['a']);
    expect(readValue(EVENT_KIND, ' a | b |a')).toEqual(['a', 'b']);
    for (const bad of ['a|', '|a', 'a||b', 'a| |b']) expect(rejected(() => readValue(EVENT_KIND, bad)).details).toEqual({ parameter: 'kind' });
  });

  it('selects known fields, id always, and names an unknown one', () => {
    const select = selectParameter(['id', 'kind', 'payload']);
    expect(readValue(select, 'kind, payload')).toEqual(['kind', 'payload']);
    const error = rejected(() => readValue(select, 'kind,color'));
    expect(error.details).toEqual({ parameter: 'select' });
    // The schema's pattern (the OpenAPI document's) refuses it, naming the fields there are.
    expect(error.message).toBe('select must be a comma-separated list of: id, kind, payload, got "kind,color".');
    expect(selectFields({ id: 'e1', kind: 'k', payload: { a: 1 }, other: 2 }, ['payload'])).toEqual({ id: 'e1', payload: { a: 1 } });
    expect(selectFields({ entity: { id: 'x' }, facts: {} }, ['facts'])).toEqual({ facts: {} });
  });
});

/** A first read's groups, every group read and exact. */
const read = (groups: Groups['groups']): Groups => ({ groups, groupsCount: groups.length, groupsCountIsExact: true, groupsAreExact: true });

describe('groups', () => {
  const answer = (buckets: [string | number, number, string?][], other: number, cardinality: number, none: number) => ({
    groups: { buckets: buckets.map(([key, doc_count, key_as_string]) => ({ key, doc_count, ...(key_as_string && { key_as_string }) })), sum_other_doc_count: other },
    groupsCount: { value: cardinality },
    none: { doc_count: none },
  });

  it('answers every group exactly when none was left over, the unknown group only when asked for', () => {
    const kind = keyword('kind');
    const aggs = answer([['b', 5], ['a', 5], ['c', 2]], 0, 3, 4);
    expect(readGroups(aggs, kind, 200, false)).toEqual({
      groups: [{ key: 'a', count: 5 }, { key: 'b', count: 5 }, { key: 'c', count: 2 }],
      groupsCount: 3,
      groupsCountIsExact: true,
      groupsAreExact: true,
    });
    const withUnknown = readGroups(aggs, kind, 200, true);
    expect(withUnknown.groups).toEqual([{ key: 'a', count: 5 }, { key: 'b', count: 5 }, { key: null, count: 4 }, { key: 'c', count: 2 }]);
    expect(withUnknown.groupsCount).toBe(4);
    // Capped: the unknown group competes for the places like any other.
    expect(readGroups(aggs, kind, 2, true).groups).toEqual([{ key: 'a', count: 5 }, { key: 'b', count: 5 }]);
  });

  it('flags groupsCount as an estimate when groups were left over, and drops the "none" value of cycle from it', () => {
    expect(readGroups(answer([['a', 9]], 7, 12, 0), keyword('kind'), 1, false)).toMatchObject({ groupsCount: 12, groupsCountIsExact: false });
    expect(readGroups(answer([[6, 9]], 7, 3, 5), cycleGroup, 1, false)).toMatchObject({ groupsCount: 2, groupsCountIsExact: false });
    const npc = readGroups(answer([[0, 3, 'false'], [1, 2, 'true']], 0, 2, 0), { name: 'npc', field: 'npc', type: 'boolean' }, 200, false);
    expect(npc.groups).toEqual([{ key: false, count: 3 }, { key: true, count: 2 }]);
  });

  it('maps keys through other records before counting (facts by source kind)', () => {
    const kinds: Record<string, string> = { s1: 'chain_event', s2: 'chain_event', s3: 'world_api' };
    const mapped = regroup(read([{ key: 's1', count: 2 }, { key: 's3', count: 3 }, { key: 's2', count: 2 }, { key: 'gone', count: 1 }]), (k) => kinds[k as string] ?? null, 200, true);
    expect(mapped).toEqual({ groups: [{ key: 'chain_event', count: 4 }, { key: 'world_api', count: 3 }, { key: null, count: 1 }], groupsCount: 3, groupsCountIsExact: true, groupsAreExact: true });
    expect(regroup(read([{ key: 'gone', count: 1 }]), () => null, 200, false).groups).toEqual([]);
    // Not every source read: the kinds' counts may be short, and say so.
    const cut = regroup({ ...read([{ key: 's1', count: 2 }]), groupsCountIsExact: false, groupsAreExact: false, groupsErrorBound: 1 }, (k) => kinds[k as string] ?? null, 200, true);
    expect(cut).toMatchObject({ groupsCountIsExact: false, groupsAreExact: false, groupsErrorBound: 1 });
  });

  it('orders equal counts by the UTF-8 bytes of the keys, as Elasticsearch does, not by UTF-16 units', () => {
    // U+E000 is EE 80 80 in UTF-8 and U+1F600 is F0 9F 98 80; in UTF-16, U+1F600 starts with D83D < E000.
    const groups = regroup(read([{ key: '\u{1F600}', count: 1 }, { key: '\uE000', count: 1 }, { key: 'z', count: 1 }]), (k) => k, 200, false).groups;
    expect(groups.map((g) => g.key)).toEqual(['z', '\uE000', '\u{1F600}']);
    expect(['\u{1F600}', '\uE000'].sort()).toEqual(['\u{1F600}', '\uE000']);
  });
});

describe('groups over several shards', () => {
  // What Elasticsearch 8.19 answered for a Pareto-distributed keyword in 3 shards, shard_size 12:
  // (key, count so far, its error); the whole answer's bound was 9. k009 truly holds 9, k012 7.
  const merged: TermBucket[] = [
    ['k001', 867, 0], ['k002', 242, 0], ['k003', 122, 0], ['k004', 73, 0], ['k005', 43, 0], ['k006', 38, 0],
    ['k008', 18, 0], ['k007', 15, 0], ['k010', 11, 3], ['k009', 8, 3], ['k013', 7, 3], ['k012', 3, 6],
  ].map(([key, doc_count, doc_count_error_upper_bound]) => ({ key: key as string, doc_count: doc_count as number, doc_count_error_upper_bound: doc_count_error_upper_bound as number }));

  it('proves a top whose last count is above everything a shard may have left out', () => {
    expect(topIsExact(merged, 9, 5, 12)).toBe(true);
    expect(topIsExact(merged, 9, 8, 12)).toBe(true);
  });

  it('refuses a top that holds a count short of rows, or that a term left out might enter', () => {
    // The 9th, k010, may be 3 rows short.
    expect(topIsExact(merged, 9, 9, 12)).toBe(false);
    // The 8th (15) is not above what a term no shard sent may hold (16).
    expect(topIsExact(merged, 16, 8, 12)).toBe(false);
    // Every count merged exact, but the merge kept all 12 candidates: one it cut may hold 3 + 13 = 16 ≥ 15.
    expect(topIsExact(merged.map((b) => ({ ...b, doc_count_error_upper_bound: 0 })), 13, 8, 12)).toBe(false);
    expect(topIsExact(merged.map((b) => ({ ...b, doc_count_error_upper_bound: 0 })), 13, 8, 13)).toBe(true);
    // Fewer terms than asked for while a shard left some out.
    expect(topIsExact(merged.slice(0, 4), 9, 5, 12)).toBe(false);
  });

  it('takes a bound of 0 (one shard, or every shard sent all its terms) as exact', () => {
    expect(topIsExact(merged, 0, 12, 12)).toBe(true);
  });

  it('answers an unproven top with its bound and the shard size that covers the field', () => {
    const answer = { groups: { buckets: merged, sum_other_doc_count: 1553, doc_count_error_upper_bound: 9 }, groupsCount: { value: 1300 }, none: { doc_count: 0 } };
    expect(readGroups(answer, keyword('k'), 5, false)).toMatchObject({ groupsAreExact: true, groupsCountIsExact: false });
    expect(readGroups(answer, keyword('k'), 10, false)).toMatchObject({ groupsAreExact: false, groupsErrorBound: 9, cover: coveringShardSize(1300) });
    expect(coveringShardSize(1300)).toBeGreaterThanOrEqual(1300 * 1.05);
    expect(coveringShardSize(MAX_SHARD_SIZE)).toBeUndefined();
  });
});

describe('histograms', () => {
  const buckets = (...pairs: [string, number][]) => ({ buckets: { buckets: pairs.map(([key_as_string, doc_count]) => ({ key_as_string, doc_count })) } });
  const histogram = (interval: 'day' | 'week' | 'month') => ({ name: `occurredAt:${interval}`, field: 'occurredAt', interval });

  it('fills every empty bucket between the first and the last, across month and year ends', () => {
    expect(readHistogram(buckets(['2026-02-27', 1], ['2026-03-02', 4]), histogram('day')).map((g) => [g.key, g.count])).toEqual([
      ['2026-02-27', 1],
      ['2026-02-28', 0],
      ['2026-03-01', 0],
      ['2026-03-02', 4],
    ]);
    expect(readHistogram(buckets(['2025-12-29', 2], ['2026-01-12', 1]), histogram('week')).map((g) => g.key)).toEqual(['2025-12-29', '2026-01-05', '2026-01-12']);
    expect(readHistogram(buckets(['2025-11-01', 2], ['2026-02-01', 1]), histogram('month')).map((g) => [g.key, g.count])).toEqual([
      ['2025-11-01', 2],
      ['2025-12-01', 0],
      ['2026-01-01', 0],
      ['2026-02-01', 1],
    ]);
    expect(readHistogram(buckets(), histogram('day'))).toEqual([]);
  });

  it(`answers up to ${MAX_BUCKETS} buckets; past that a 400 asking for a coarser interval`, () => {
    const last = new Date(Date.UTC(2026, 0, 1) + (MAX_BUCKETS - 1) * 86_400_000).toISOString().slice(0, 10);
    expect(readHistogram(buckets(['2026-01-01', 1], [last, 1]), histogram('day'))).toHaveLength(MAX_BUCKETS);
    const next = new Date(Date.UTC(2026, 0, 1) + MAX_BUCKETS * 86_400_000).toISOString().slice(0, 10);
    const error = rejected(() => readHistogram(buckets(['2026-01-01', 1], [next, 1]), histogram('day')));
    expect(error.details).toEqual({ parameter: 'group_by' });
    expect(error.message).toContain('week or month');
  });
});

describe('cursor count', () => {
  const key = 'k';
  const scope = cursorScope('/v1/events', { kind: ['a'] });

  it('carries the first page\'s count to the next pages, and a one-value list binds as the value', () => {
    const raw = encodeCursor({ generation: 'g1', after: ['2026-06-01T00:00:00.000Z', 'e1'], count: { value: 1234, exact: false } }, scope, key);
    expect(decodeCursor(raw, scope, key)).toEqual({ generation: 'g1', after: ['2026-06-01T00:00:00.000Z', 'e1'], count: { value: 1234, exact: false } });
    expect(cursorScope('/v1/events', { kind: 'a' })).toBe(scope);
    expect(cursorScope('/v1/events', { kind: ['a', 'b'] })).not.toBe(scope);
    // Cursors of before counts still decode, without one.
    expect(decodeCursor(encodeCursor({ generation: 'g1', after: ['x'] }, scope, key), scope, key).count).toBeUndefined();
  });
});
