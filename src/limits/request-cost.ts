/**
 * What a request costs from its client's budget (./decide.ts). The cost class is
 * declared with each route's operation (src/routes/operation.ts) and read from the route the
 * router matches, before anything else runs for the request, so that a refused request costs
 * the gateway nothing more; the query only raises a list's class (`q`, `group_by`). Pure.
 *
 * Points follow what the request asks of Elasticsearch (a search costs it more than an entity
 * page, a page several times a document by id; a `group_by` aggregates every matching row):
 *
 * | class | requests | points |
 * |---|---|---|
 * | `document` | a record by id, an operations document, `/v1`, the OpenAPI document, autocomplete | 1 |
 * | `list` | a list page (`/v1/entities`, typed and current collections, events, killmails, sources, the provenance subroutes) | 2 |
 * | `search` | a list with `q`; an entity's `history` (four reads) | 3 |
 * | any list with `group_by` | facets and histograms | 5 per field asked for (up to 3) |
 * | any list with `id=a|b|…` | a batch of records | the list's points + 1 per 10 ids |
 * | `probe` | `/v1/health`, `/v1/ready` | 1, and 0 from loopback |
 * | `metrics` | `/metrics`, `/v1/metrics` (a scrape counts every index: some 30 Elasticsearch requests) | 5, and 0 from loopback |
 * | `download` | `/v1/exports/{file}`; any list with `format=csv\|ndjson` (the whole list as a file) | no points: downloads are limited by how many run at once |
 *
 * A path no route answers costs nothing and is never refused: it is a 404 (static pages are
 * files served from memory). Probes are marked: they bypass admission control
 * (./admission.ts), so that monitoring and load balancers see the gateway as it is
 * under overload, not their own refusals. Expensive requests are also bounded by the parameter
 * rules (src/query/route-parameters.ts): `limit` ≤ 200, `q` ≤ 200 characters.
 */

export type CostClass = 'document' | 'list' | 'search' | 'probe' | 'metrics' | 'download';

export type Cost =
  /** Points from the request budget; `probe`: a health, readiness or metrics request. */
  | { kind: 'points'; points: number; probe?: true }
  /** A download: counted against the client's concurrent downloads, not its points. */
  | { kind: 'download' };

export const COSTS = { document: 1, list: 2, search: 3, groupBy: 5, probe: 1, metrics: 5 } as const;

/**
 * Whether admission control turns this request away while it is saturated, before any work is
 * done for it (the early refusal before Koa and the rate-limit middleware both ask): a list,
 * search or facet surely reads Elasticsearch; a document, a probe or a download may not.
 */
export function refusedWhenSaturated(cost: Cost): cost is Extract<Cost, { kind: 'points' }> {
  return cost.kind === 'points' && !cost.probe && cost.points >= COSTS.list;
}

/** A query parameter's value, or undefined when absent or blank (blank counts as absent at the edge too). */
function present(query: Record<string, string | string[] | undefined>, name: string): boolean {
  const value = query[name];
  const text = Array.isArray(value) ? value.join('') : value;
  return text !== undefined && text.trim() !== '';
}

/** Points for a request to a route of `costClass` (undefined: no route matched) with `query`; `loopback` is the client's address. */
export function requestCost(costClass: CostClass | undefined, query: Record<string, string | string[] | undefined>, loopback: boolean): Cost {
  switch (costClass) {
    case undefined:
      return { kind: 'points', points: 0 };
    case 'download':
      return { kind: 'download' };
    case 'probe':
    case 'metrics':
      return { kind: 'points', points: loopback ? 0 : COSTS[costClass], probe: true };
    case 'document':
      return { kind: 'points', points: COSTS.document };
    case 'list':
    case 'search': {
      if (present(query, 'format')) return { kind: 'download' };
      // `id=a|b|…`: a page, and a point for every 10 ids asked (100 ids: 12 points, against 100 for 100 records).
      const perIds = present(query, 'id') ? Math.ceil(String(query.id).split('|').length / 10) : 0;
      // Each facet is an aggregation of its own.
      if (present(query, 'group_by')) return { kind: 'points', points: COSTS.groupBy * Math.min(3, String(query.group_by).split(',').length) + perIds };
      return { kind: 'points', points: (costClass === 'search' || present(query, 'q') ? COSTS.search : COSTS.list) + perIds };
    }
  }
}
