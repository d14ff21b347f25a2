/** What each request costs from its client's budget, from the path and query alone. */
import { describe, expect, it } from 'vitest';
import { COSTS, requestCost } from '../../src/http/request-cost.ts';

const points = (path: string, query: Record<string, string> = {}, loopback = false) => {
  const cost = requestCost(path, query, loopback);
  return cost.kind === 'points' ? cost.points : cost.kind;
};

describe('request cost', () => {
  it.each([
    ['/v1/entities/system:stillness:1', {}, COSTS.document],
    ['/v1/killmails/k1/raw', {}, COSTS.document],
    ['/v1/ops/freshness', {}, COSTS.document],
    ['/v1', {}, COSTS.document],
    ['/', {}, COSTS.document],
    ['/v1/openapi.json', {}, COSTS.document],
    ['/v1/autocomplete', { q: 'zet' }, COSTS.document],
    ['/v1/entities', {}, COSTS.list],
    ['/v1/entities/', { q: ' ' }, COSTS.list],
    ['/v1/systems', { limit: '200' }, COSTS.list],
    ['/v1/current/ownership', {}, COSTS.list],
    ['/v1/entities/x/facts', {}, COSTS.list],
    ['/v1/events', { kind: 'a|b' }, COSTS.list],
    ['/v1/search', { q: 'zeta' }, COSTS.search],
    ['/v1/killmails', { q: 'zeta' }, COSTS.search],
    ['/v1/entities/x/history', {}, COSTS.search],
    ['/v1/events', { group_by: 'kind' }, COSTS.groupBy],
    ['/v1/entities/x/facts', { group_by: 'confidence', q: 'x' }, COSTS.groupBy],
    ['/v1/nowhere/at/all', {}, COSTS.document],
    ['/explorer/index.html', {}, COSTS.document],
  ] as const)('%s %j costs %d', (path, query, expected) => {
    expect(points(path, query)).toBe(expected);
  });

  it('charges probes nothing from loopback only, and marks them (they bypass admission control)', () => {
    for (const [probe, cost] of [['/v1/health', COSTS.probe], ['/v1/ready', COSTS.probe], ['/metrics', COSTS.metrics], ['/v1/metrics', COSTS.metrics]] as const) {
      expect(requestCost(probe, {}, true), probe).toEqual({ kind: 'points', points: 0, probe: true });
      expect(requestCost(probe, {}, false), probe).toEqual({ kind: 'points', points: cost, probe: true });
    }
    expect(requestCost('/v1/entities', {}, false)).toEqual({ kind: 'points', points: COSTS.list });
    expect(points('/v1/entities', {}, true)).toBe(COSTS.list);
  });

  it('counts downloads by concurrency, not points', () => {
    expect(points('/v1/exports/entities.jsonl')).toBe('download');
    expect(points('/v1/exports/manifest.json', { q: 'x' })).toBe('download');
  });
});
