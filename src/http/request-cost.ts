/**
 * What a request costs from its client's budget (middleware/rate-limit.ts), decided from the
 * path and query alone, before routing, so that a refused request costs the gateway nothing
 * more. Pure.
 *
 * Points follow what the request asks of Elasticsearch (bench/RESULTS.md: a search costs
 * Elasticsearch about 1.3× an entity page, a page several times a document by id; a
 * `group_by` aggregates every matching row):
 *
 * | request | points |
 * |---|---|
 * | a document: a record by id, an operations document, `/v1`, the OpenAPI document, autocomplete | 1 |
 * | a list page (`/v1/entities`, typed and current collections, events, killmails, sources, the provenance subroutes) | 2 |
 * | a search: a list with `q`; an entity's `history` (four reads) | 3 |
 * | `group_by` (facets and histograms) | 5 |
 * | `/v1/health`, `/v1/ready` | 1, and 0 from loopback |
 * | `/metrics`, `/v1/metrics` (a scrape counts every index: some 30 Elasticsearch requests) | 5, and 0 from loopback |
 * | `/v1/exports/{file}` | no points: downloads are limited by how many run at once |
 *
 * Anything else (a path no route answers, static files) costs 1. Probes (health, ready, metrics)
 * are marked: they bypass admission control (src/search/admission.ts), so that monitoring and
 * load balancers see the gateway as it is under overload, not their own refusals. Expensive requests are also
 * bounded by the parameter rules (src/query/params.ts): `limit` ≤ 200, `q` ≤ 200 characters.
 */

export type Cost =
  /** Points from the request budget; `probe`: a health, readiness or metrics request. */
  | { kind: 'points'; points: number; probe?: true }
  /** A download: counted against the client's concurrent downloads, not its points. */
  | { kind: 'download' };

export const COSTS = { document: 1, list: 2, search: 3, groupBy: 5, probe: 1, metrics: 5 } as const;

const PROBES = new Map<string, number>([
  ['/v1/health', COSTS.probe],
  ['/v1/ready', COSTS.probe],
  ['/metrics', COSTS.metrics],
  ['/v1/metrics', COSTS.metrics],
]);
/** First segments under /v1 that are not lists. */
const NOT_LISTS = new Set(['health', 'ready', 'metrics', 'openapi.json', 'ops', 'autocomplete', 'exports']);
const PROVENANCE_LISTS = new Set(['facts', 'relations', 'sources']);

/** A query parameter's value, or undefined when absent or blank (blank counts as absent at the edge too). */
function present(query: Record<string, string | string[] | undefined>, name: string): boolean {
  const value = query[name];
  const text = Array.isArray(value) ? value.join('') : value;
  return text !== undefined && text.trim() !== '';
}

/** Points for `path` (trailing slashes ignored) with `query`; `loopback` is the client's address. */
export function requestCost(path: string, query: Record<string, string | string[] | undefined>, loopback: boolean): Cost {
  const clean = path.length > 1 ? path.replace(/\/+$/, '') : path;
  const probe = PROBES.get(clean);
  if (probe !== undefined) return { kind: 'points', points: loopback ? 0 : probe, probe: true };
  const segments = clean.split('/').filter(Boolean);
  if (segments[0] !== 'v1' || segments.length < 2) return { kind: 'points', points: COSTS.document };
  const [, first, , third] = segments;
  if (first === 'exports') return { kind: 'download' };
  if (present(query, 'group_by')) return { kind: 'points', points: COSTS.groupBy };
  const list =
    (segments.length === 2 && !NOT_LISTS.has(first!)) ||
    (segments.length === 3 && first === 'current') ||
    (segments.length === 4 && first === 'entities' && PROVENANCE_LISTS.has(third!));
  if (segments.length === 4 && first === 'entities' && third === 'history') return { kind: 'points', points: COSTS.search };
  if (!list) return { kind: 'points', points: COSTS.document };
  return { kind: 'points', points: present(query, 'q') ? COSTS.search : COSTS.list };
}
