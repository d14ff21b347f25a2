/**
 * The explorer's only door to the gateway: GET requests to the public `/v1` routes of the same
 * origin through the typed client (packages/client: its waits where the gateway asks, its one
 * error class), answered in the one envelope `{data, meta, nextCursor?}`. Nothing here knows
 * about pages or components; it does not cache (the gateway's ETags do).
 */
import { type Path, RegistryError, type Schemas, createRegistryClient } from '../../packages/client/src/index.ts';
import { pinnedBundle } from './route.ts';

export { RegistryError };

/** The gateway that served this page. */
const registry = createRegistryClient({ baseUrl: '' });

/** `meta` of an answer; a list's fields (counts, groups, `indexedThrough`) where it is a list's. */
export type Meta = Schemas['Meta'] & Partial<Omit<Schemas['ListMeta'], keyof Schemas['Meta']>>;

/** The one envelope: the row types vary by route, so `data` is the caller's. */
export interface Envelope<T> {
  data: T;
  meta: Meta;
  nextCursor?: string;
}

/** One `group_by` group: `key` null is the rows with no value. */
export type Group = Schemas['Group'];

/** A row as the API returns it: open records, fields vary by route. */
export type Row = Record<string, any>;

/** Query parameters; empty and undefined values are left out (the API treats empty as absent). */
export type Params = Record<string, string | number | undefined | null>;

/** `/v1/...?a=b` with the empty parameters dropped, in the order given (and the pinned bundle: `pinned`). */
export function apiUrl(path: string, params: Params = {}): string {
  const text = new URLSearchParams(Object.entries(present(pinned(path, params))).map(([name, value]) => [name, String(value)])).toString();
  return text ? `${path}?${text}` : path;
}

/**
 * `params` and, while the explorer is pinned to a bundle (route.ts `pinnedBundle`), `bundle`: on
 * every read of the index but a stream (a kept bundle has no new rows), the bundle routes
 * themselves, the root (the service's settings, which read no bundle) and the routes comparing
 * two bundles (`/v1/changes`, `/v1/memberships`: they name theirs with `from` and `to`).
 */
function pinned(path: string, params: Params): Params {
  const unpinned = path === '/v1' || path.endsWith('/stream') || path.startsWith('/v1/bundles') || path === '/v1/changes' || path === '/v1/memberships';
  const bundle = unpinned ? undefined : pinnedBundle();
  return bundle ? { ...params, bundle } : params;
}

/** Path segment of an id (ids hold `:` and other characters that must be escaped). */
export const seg = (id: string) => encodeURIComponent(id);

/** The parameters the API reads: empty ones left out, in the order given. */
function present(params: Params): Record<string, string | number> {
  return Object.fromEntries(Object.entries(params).filter((entry): entry is [string, string | number] => entry[1] !== undefined && entry[1] !== null && entry[1] !== ''));
}

/** GETs a `/v1` route (pinned: `pinned`) and returns its envelope, or throws a `RegistryError`. */
export async function getJson<T = Row[]>(path: string, params: Params = {}, signal?: AbortSignal): Promise<Envelope<T>> {
  // Paths here are built at run time (ids in them), so no typed route is named: the caller says what comes back.
  return (await registry.get(path as Path, { query: present(pinned(path, params)), signal } as never)) as Envelope<T>;
}

/** The URL of a bundle file: the live bundle's, or the pinned one's. */
export function exportUrl(file: string): string {
  const pinned = pinnedBundle();
  return pinned ? `/v1/bundles/${seg(pinned)}/exports/${file}` : `/v1/exports/${file}`;
}

/** Every row of a list, following `nextCursor` (at most `maxRows`, for bounded sections). */
export async function getAll(path: string, params: Params, maxRows: number, signal?: AbortSignal): Promise<{ rows: Row[]; complete: boolean }> {
  const rows: Row[] = [];
  let cursor: string | undefined;
  do {
    const page = await getJson<Row[]>(path, { ...params, limit: 200, cursor }, signal);
    rows.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor !== undefined && rows.length < maxRows);
  return { rows, complete: cursor === undefined };
}

/** The groups of a `group_by` request, or `undefined` when the gateway cannot group that way. */
export async function getGroups(path: string, params: Params, field: string, signal?: AbortSignal): Promise<Envelope<Group[]> | undefined> {
  // Rows without a value are a group of their own (key null), except on time histograms.
  const unknown = field.includes(':') ? undefined : 'true';
  try {
    return await getJson<Group[]>(path, { ...params, group_by: field, include_unknown: unknown, cursor: undefined, sort: undefined }, signal);
  } catch (error) {
    if (error instanceof RegistryError && error.status === 400) return undefined;
    throw error;
  }
}

/** What one request with several `group_by` fields answers, each field's groups as an envelope of its own. */
export type Facets = Record<string, Envelope<Group[]>>;

/**
 * Several facets in one request (`group_by=a,b,c`): the gateway counts each under the other
 * filters but not its own, as a sidebar needs. Rows without a value are a group of their own.
 */
export async function getFacets(path: string, params: Params, fields: string[], signal?: AbortSignal): Promise<Facets> {
  type Answer = Record<string, Group[]>;
  const answer = await getJson<Answer>(path, { ...params, group_by: fields.join(','), include_unknown: 'true', cursor: undefined, sort: undefined }, signal);
  const counts = answer.meta.facets ?? {};
  return Object.fromEntries(fields.map((field) => [field, { data: answer.data[field] ?? [], meta: { ...answer.meta, count: counts[field]?.count, groupsCount: counts[field]?.groupsCount } }]));
}

let artefacts: Promise<Row[]> | undefined;

/**
 * Every source artefact, from the public export file (the pinned bundle's while pinned): the API
 * has no route from a source to its artefacts, and the file is small (one row per imported
 * artefact, not per entity). Read once per page load.
 */
export function allArtefacts(): Promise<Row[]> {
  artefacts ??= fetch(exportUrl('source_artefacts.jsonl')).then(async (response) => {
    if (!response.ok) throw new RegistryError(response.status, 'http', `The artefacts export answered HTTP ${response.status}.`);
    return (await response.text())
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Row);
  });
  return artefacts;
}
