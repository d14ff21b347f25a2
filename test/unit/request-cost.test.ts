/**
 * What each request costs from its client's budget: the cost class declared with the route the
 * router matches (every route has one), raised by `q` and `group_by` on lists; a path no route
 * answers costs nothing.
 */
import { describe, expect, it } from 'vitest';
import { COSTS, refusedWhenSaturated, requestCost } from '../../src/limits/request-cost.ts';
import { costOf, operationOf, routeCost } from '../../src/routes/operation.ts';
import { composed } from '../../harness/composed.ts';

// Routes are only registered: nothing here reaches Elasticsearch (nothing listens on port 9).
const { router } = await composed();

const points = (path: string, query: Record<string, string> = {}, loopback = false) => {
  const cost = requestCost(routeCost(router, path), query, loopback);
  return cost.kind === 'points' ? cost.points : cost.kind;
};

describe('request cost', () => {
  it('is declared for every route of the router', () => {
    const layers = router.stack.filter((layer) => layer.methods.includes('GET'));
    expect(layers.length).toBeGreaterThan(50);
    for (const layer of layers) {
      const operation = operationOf(layer.stack.at(-1));
      expect(operation, String(layer.path)).toBeDefined();
      expect(['document', 'list', 'search', 'probe', 'metrics', 'download'], String(layer.path)).toContain(costOf(operation!));
    }
  });

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
  ] as const)('%s %j costs %d', (path, query, expected) => {
    expect(points(path, query)).toBe(expected);
  });

  it('charges a path no route answers nothing: it is a 404, never refused', () => {
    for (const path of ['/v1/nowhere', '/v1/nowhere/at/all', '/explorer/index.html', '/v2/entities']) expect(points(path), path).toBe(0);
  });

  it('charges probes nothing from loopback only, and marks them (they bypass admission control)', () => {
    for (const [probe, cost] of [['/v1/health', COSTS.probe], ['/v1/ready', COSTS.probe], ['/metrics', COSTS.metrics], ['/v1/metrics', COSTS.metrics]] as const) {
      expect(requestCost(routeCost(router, probe), {}, true), probe).toEqual({ kind: 'points', points: 0, probe: true });
      expect(requestCost(routeCost(router, probe), {}, false), probe).toEqual({ kind: 'points', points: cost, probe: true });
    }
    expect(points('/v1/entities', {}, true)).toBe(COSTS.list);
  });

  it('counts downloads by concurrency, not points', () => {
    expect(points('/v1/exports/entities.jsonl')).toBe('download');
    expect(points('/v1/exports/manifest.json', { q: 'x' })).toBe('download');
    // A list asked as a file, whatever else it asks.
    for (const path of ['/v1/entities', '/v1/search', '/v1/events', '/v1/killmails', '/v1/current/characters', '/v1/entities/x/facts']) {
      expect(points(path, { format: 'csv', q: 'x', id: 'a|b' }), path).toBe('download');
    }
    expect(points('/v1/events', { format: ' ' })).toBe(COSTS.list);
  });
});

describe('refusedWhenSaturated: what admission control turns away before any work', () => {
  it('refuses lists, searches and facets; never documents, probes or downloads', () => {
    expect(refusedWhenSaturated({ kind: 'points', points: COSTS.list })).toBe(true);
    expect(refusedWhenSaturated({ kind: 'points', points: COSTS.search })).toBe(true);
    expect(refusedWhenSaturated({ kind: 'points', points: COSTS.groupBy * 2 })).toBe(true);
    expect(refusedWhenSaturated({ kind: 'points', points: COSTS.document })).toBe(false);
    expect(refusedWhenSaturated({ kind: 'points', points: COSTS.metrics, probe: true })).toBe(false);
    expect(refusedWhenSaturated({ kind: 'download' })).toBe(false);
  });
});
