/** Several facets in one request (src/query/groups.ts: toFacetsBody, readFacet). */
import { describe, expect, it } from 'vitest';
import { readFacet, toFacetsBody } from '../../src/query/groups.ts';

const all = { bool: { filter: [{ term: { environment: 'stillness' } }, { terms: { entityType: ['system'] } }] } };
const withoutType = { bool: { filter: [{ term: { environment: 'stillness' } }] } };
const aggs = { groups: { terms: { field: 'entityType', size: 10 } } };

describe('toFacetsBody', () => {
  it('aggregates a facet with no filter of its own under the query, and one without its own filter over all rows it matches', () => {
    const body = toFacetsBody(all, [
      { name: 'entityType', query: withoutType, aggs },
      { name: 'cycle', query: all, aggs: { groups: { terms: { field: 'cycle', size: 10 } } } },
    ]);
    expect(body.query).toEqual(all);
    expect(body.size).toBe(0);
    expect(body.track_total_hits).toBe(true);
    expect(body.aggs!.entityType).toEqual({ global: {}, aggs: { facet: { filter: withoutType, aggs } } });
    expect(body.aggs!.cycle).toEqual({ filter: { match_all: {} }, aggs: { facet: { filter: { match_all: {} }, aggs: { groups: { terms: { field: 'cycle', size: 10 } } } } } });
  });

  it('takes a route without filters (no query) and reads each facet back with its count', () => {
    const body = toFacetsBody(undefined, [{ name: 'kind', query: undefined, aggs }]);
    expect(body.query).toBeUndefined();
    expect(body.aggs!.kind).toEqual({ filter: { match_all: {} }, aggs: { facet: { filter: { match_all: {} }, aggs } } });
    const answer = { kind: { doc_count: 9, facet: { doc_count: 7, groups: { buckets: [] } } } };
    expect(readFacet(answer, 'kind')).toEqual({ aggregations: answer.kind.facet, count: 7 });
  });
});
