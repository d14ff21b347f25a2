/**
 * What a request costs from its client's budget (./decide.ts). The cost class is
 * declared with each route's operation (src/routes/operation.ts) and read from the route the
 * router matches, before anything else runs for the request, so that a refused request costs
 * the gateway nothing more; the query only raises a list's class (`q`, `group_by`). Pure.
 *
 * Points follow what the request asks of Elasticsearch (a search costs it more than an entity
 * page, a page several times a document by id; a `group_by` aggregates every matching row).
 * What each route costs is the table `costTable` writes from these numbers and the router
 * (docs/operations.md, *What a request costs*; `npm run docs:config` rewrites it, a test checks it).
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
/** Facets one `group_by` may ask for at once, each charged `COSTS.groupBy` (a fourth is a 400). */
export const MAX_FACETS = 3;
/** A batch (`id=a|b|…`) costs its list's points and one more per this many ids. */
export const IDS_PER_POINT = 10;

/** What a client is told the points are, in a sentence's words (the OpenAPI document, the settings table). */
export const POINTS_IN_WORDS = `a record ${COSTS.document}, a list page ${COSTS.list}, a search ${COSTS.search}, \`group_by\` ${COSTS.groupBy} per field (up to ${MAX_FACETS})`;

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
      const perIds = present(query, 'id') ? Math.ceil(String(query.id).split('|').length / IDS_PER_POINT) : 0;
      // Each facet is an aggregation of its own.
      if (present(query, 'group_by')) return { kind: 'points', points: COSTS.groupBy * Math.min(MAX_FACETS, String(query.group_by).split(',').length) + perIds };
      return { kind: 'points', points: (costClass === 'search' || present(query, 'q') ? COSTS.search : COSTS.list) + perIds };
    }
  }
}

/** The routes of one cost class, as the router has them (`{param}` paths). */
export type RoutesByCost = ReadonlyMap<CostClass, readonly string[]>;

const codes = (paths: readonly string[] = []) => paths.map((p) => `\`${p}\``).join(', ');

/**
 * The table of what each request costs, every route of the router in it (docs/operations.md);
 * `downloadsAtOnce`: the default of EXPORT_CONCURRENCY.
 */
export function costTable(routes: RoutesByCost, downloadsAtOnce: number): string {
  const rows: [string, string][] = [
    [`a record or document: ${codes(routes.get('document'))}`, String(COSTS.document)],
    [`a list page, or opening an event stream: ${codes(routes.get('list'))}`, `${COSTS.list}; ${COSTS.search} with \`q\``],
    [`a search: ${codes(routes.get('search'))}`, String(COSTS.search)],
    ['any list with `group_by` (facets and histograms)', `${COSTS.groupBy} per field (up to ${MAX_FACETS}), instead of the page's`],
    ['any list with `id=a\\|b\\|…` (a batch)', `the list's points + 1 per ${IDS_PER_POINT} ids`],
    [`a probe: ${codes(routes.get('probe'))}`, `${COSTS.probe}, and **0 from loopback** (never limited for local monitoring)`],
    [`a scrape: ${codes(routes.get('metrics'))} (it counts every index: some 30 Elasticsearch requests)`, `${COSTS.metrics}, and **0 from loopback**`],
    [`a download: ${codes(routes.get('download'))}, any list with \`format=csv\\|ndjson\``, `none: downloads are limited by how many one client runs at once (\`EXPORT_CONCURRENCY\`, ${downloadsAtOnce})`],
  ];
  return ['| request | points |', '|---|---|', ...rows.map(([request, points]) => `| ${request} | ${points} |`)].join('\n');
}
