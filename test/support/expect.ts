/**
 * What the route tests share: walking a list to its end, the specification's cycle scopes,
 * the documented list order, and the expected rows of each collection, all computed from the
 * bundle files. Deliberately written without importing anything from src/: an expectation
 * that reused the gateway's own code could not catch the gateway's mistakes.
 */
import { expect } from 'vitest';
import { type BundleRow, readAllRows, readJson, readManifest } from '../../generator/read-bundle.ts';
import type { TestGateway } from './gateway.ts';

// ---------------------------------------------------------------------------------------------
// Walking lists

export interface Walk {
  rows: any[];
  pages: number;
}

/**
 * Follows `nextCursor` from the first page to the last and returns every row. Fails on a
 * non-200 page, a page longer than `limit`, a short page that still offers a cursor, a cursor
 * seen twice (a loop) or more than `maxPages` pages (a walk that never ends).
 */
export async function walk(gw: TestGateway, route: string, limit: number, maxPages = 1_000): Promise<Walk> {
  const rows: any[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let pages = 1; ; pages += 1) {
    expect(pages, `${route}: more than ${maxPages} pages`).toBeLessThanOrEqual(maxPages);
    const url = `${route}${route.includes('?') ? '&' : '?'}limit=${limit}${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const { status, body } = await gw.get(url);
    expect(status, `${url}: ${JSON.stringify(body?.error)}`).toBe(200);
    expect(Array.isArray(body.data), url).toBe(true);
    expect(body.data.length, url).toBeLessThanOrEqual(limit);
    rows.push(...body.data);
    if (body.nextCursor === undefined) return { rows, pages };
    // The gateway fetches limit + 1 rows to decide on a next page: a cursor means a full page.
    expect(body.data.length, `${url}: a page with a nextCursor is full`).toBe(limit);
    expect(seen.has(body.nextCursor), `${url}: cursor repeated`).toBe(false);
    seen.add(body.nextCursor);
    cursor = body.nextCursor;
  }
}

/** The page count a complete walk of `n` rows at `limit` takes (an empty list is one page). */
export const pagesFor = (n: number, limit: number) => Math.max(1, Math.ceil(n / limit));

/** An error answer in the one documented shape, with the parameter named when given. */
export function expectError(res: { status: number; body: any }, status: number, code: string, parameter?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body?.error?.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.meta).toMatchObject({ apiVersion: 'v1' });
  if (parameter !== undefined) {
    expect(res.body.error.details).toEqual({ parameter });
    expect(res.body.error.message).toContain(parameter);
  }
}

// ---------------------------------------------------------------------------------------------
// Cycle scope, exactly as the specification says

/** `default` = current cycle + uncycled; `current` = strictly current; `all`; or a list of cycles. */
export type Scope = 'default' | 'current' | 'all' | number[];

/** Query strings of the scopes the brief names, with what each means. */
export const SCOPES: [query: string, scope: Scope][] = [
  ['', 'default'],
  ['cycles=all', 'all'],
  ['cycles=current', 'current'],
  ['cycles=5', [5]],
  ['cycle=6', [6]],
  ['cycles=5,6', [5, 6]],
];

/** A row's cycle: an integer >= 1, else uncycled (the export omits the key when unknown). */
export function cycleOf(value: unknown): number | undefined {
  return Number.isInteger(value) && (value as number) >= 1 ? (value as number) : undefined;
}

export function inScope(cycle: number | undefined, scope: Scope, current: number): boolean {
  if (scope === 'all') return true;
  if (scope === 'current') return cycle === current;
  if (scope === 'default') return cycle === undefined || cycle === current;
  return cycle !== undefined && scope.includes(cycle);
}

/** Appends a query string part to a route. */
export const withQuery = (route: string, query: string) => (query ? `${route}${route.includes('?') ? '&' : '?'}${query}` : route);

/** The specification's cycle boundaries (the gateway's defaults): earlier instants are uncycled. */
const CYCLE_STARTS: [number, number][] = [
  [5, Date.parse('2026-03-11T09:00:00Z')],
  [6, Date.parse('2026-06-25T09:00:00Z')],
];

/** The cycle an instant falls in (killmails always, events without `cycle`), or uncycled. */
export function cycleOfInstant(text: string): number | undefined {
  const ms = Date.parse(text);
  let cycle: number | undefined;
  for (const [number, start] of CYCLE_STARTS) if (ms >= start) cycle = number;
  return cycle;
}

// ---------------------------------------------------------------------------------------------
// Order

/** UTF-8 byte order, which is how Elasticsearch sorts keywords. */
export function byteCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** A non-blank string or undefined: blank names do not label anything. */
const nonBlank = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

/**
 * Lower case one code point at a time, as Lucene's `lowercase` filter does (JS's whole-string
 * `toLowerCase` applies context rules such as the Greek final sigma, Lucene does not).
 */
export const fold = (s: string) => Array.from(s, (ch) => ch.toLowerCase()).join('');

/** The list label of src/indices: the first non-blank candidate, cut at 256 UTF-16 units, folded. */
export function labelOf(...candidates: unknown[]): string {
  for (const c of candidates) {
    const value = nonBlank(c);
    if (value !== undefined) return fold(value.slice(0, 256));
  }
  return '';
}

/** The documented entity order: displayName ?? name ?? id, case-insensitive, ties by id. */
export function byLabel<T>(label: (r: T) => string, id: (r: T) => string): (a: T, b: T) => number {
  return (a, b) => byteCompare(label(a), label(b)) || byteCompare(id(a), id(b));
}

export const entityLabel = (r: BundleRow) => labelOf(r.displayName, r.name, r.id);

/** An RFC 3339 time as nanoseconds since the epoch, so `.1Z` and `.100Z` are equal and order exactly. */
export function instantNanos(text: string): bigint {
  const match = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(text);
  if (!match) throw new Error(`not an RFC 3339 time: ${text}`);
  return BigInt(Date.parse(`${match[1]}${match[3]}`)) * 1_000_000n + BigInt((match[2] ?? '').padEnd(9, '0').slice(0, 9));
}

/** Newest first by instant, ties by id descending (the order of events and killmails). */
export function newestFirst<T>(rows: T[], at: (row: T) => string, id: (row: T) => string): T[] {
  return [...rows].sort((a, b) => {
    const d = instantNanos(at(b)) - instantNanos(at(a));
    return d !== 0n ? (d > 0n ? 1 : -1) : byteCompare(id(b), id(a));
  });
}

/** Registry placeholder labels (`Character 2112000123`, `Gate 0x5e1f`): no known name yet. */
export const isPlaceholderName = (name: string) => /^[A-Za-z][A-Za-z ]* (0x[0-9a-f]+|[0-9]+)$/i.test(name);

// ---------------------------------------------------------------------------------------------
// The bundle, read once per test file

/** Keeps the last row of each key (the files' documented duplicate rule), in first-seen order. */
export function lastWins<T>(rows: T[], key: (r: T) => string): T[] {
  return [...new Map(rows.map((r) => [key(r), r])).values()];
}

export const relationKey = (r: BundleRow) => nonBlank(r.id) ?? `relation:${r.subjectEntityId}:${r.predicate}:${r.objectEntityId}:${r.sourceId ?? ''}`;

export interface Bundle {
  dir: string;
  manifest: BundleRow;
  currentCycle: number;
  entities: BundleRow[];
  currentEntities: BundleRow[];
  currentRelations: BundleRow[];
}

export async function readBundle(dir: string): Promise<Bundle> {
  const manifest = await readManifest(dir);
  const catalog = await readJson(dir, 'catalog.json');
  const cycles: number[] = manifest.cycles ?? catalog.cycles ?? [];
  expect(cycles.length, 'the bundle declares its cycles').toBeGreaterThan(0);
  return {
    dir,
    manifest,
    currentCycle: Math.max(...cycles),
    entities: lastWins(await readAllRows(dir, 'entities.jsonl'), (r) => r.id),
    currentEntities: lastWins(await readAllRows(dir, 'current_entities.jsonl'), (r) => r.entity.id),
    currentRelations: lastWins(await readAllRows(dir, 'current_relations.jsonl'), relationKey),
  };
}

/** Entity ids of an environment and scope that pass `where`, in list order. */
export function expectedEntities(b: Bundle, scope: Scope, where: (r: BundleRow) => boolean = () => true, environment = 'stillness'): string[] {
  return b.entities
    .filter((r) => r.environment === environment && inScope(cycleOf(r.cycle), scope, b.currentCycle) && where(r))
    .sort(byLabel(entityLabel, (r) => r.id))
    .map((r) => r.id);
}

// ---------------------------------------------------------------------------------------------
// Current collections (src/indices/collections.ts, mirrored here on purpose)

/** Current entity collection → entity type, and whether it falls back to entity rows. */
export const CURRENT_ENTITY: Record<string, { type: string; fallback: boolean }> = {
  characters: { type: 'character', fallback: false },
  tribes: { type: 'tribe', fallback: false },
  assemblies: { type: 'assembly', fallback: true },
  gates: { type: 'gate', fallback: true },
  storage: { type: 'storage', fallback: true },
  turrets: { type: 'turret', fallback: true },
  regions: { type: 'region', fallback: true },
  constellations: { type: 'constellation', fallback: true },
  items: { type: 'item', fallback: true },
  materials: { type: 'material', fallback: true },
  enemies: { type: 'enemy', fallback: true },
  recipes: { type: 'recipe', fallback: true },
  blueprints: { type: 'blueprint', fallback: true },
  ships: { type: 'ship', fallback: true },
  structures: { type: 'structure', fallback: true },
  systems: { type: 'system', fallback: true },
  routes: { type: 'route', fallback: true },
};

/** Current relation feeds → predicates. */
export const CURRENT_RELATION: Record<string, string[]> = {
  ownership: ['owned_by'],
  'route-edges': ['links_to', 'observed_between'],
};

/** A current character counts only with chain evidence among its facts (the reference's rule). */
const EVIDENCE = ['source_event_kind', 'source_event_id', 'transaction_digest'];
const factKeys = (facts: unknown): string[] =>
  Array.isArray(facts) ? facts.map((f) => f?.key) : facts && typeof facts === 'object' ? Object.keys(facts) : [];

export const currentLabel = (r: BundleRow) => labelOf(r.entity.displayName, r.entity.name, r.entity.id);
export const currentRelationLabel = (r: BundleRow) =>
  fold(`${(nonBlank(r.subjectDisplayName) ?? r.subjectEntityId).slice(0, 256)} | ${(nonBlank(r.objectDisplayName) ?? r.objectEntityId).slice(0, 256)}`.slice(0, 256));

export interface ExpectedCurrent {
  /** `current`: current rows; `entities`: the entity fallback. */
  mode: 'current' | 'entities';
  /** Rows as the route lists them, in order. */
  rows: BundleRow[];
}

/** The current rows of a collection in an environment and scope, before any `q` or `profile`. */
export function currentRowsOf(b: Bundle, collection: string, scope: Scope, environment = 'stillness'): BundleRow[] {
  const { type } = CURRENT_ENTITY[collection]!;
  return b.currentEntities
    .filter((r) => r.entity.entityType === type && r.entity.environment === environment && inScope(cycleOf(r.entity.cycle), scope, b.currentCycle))
    .filter((r) => type !== 'character' || factKeys(r.facts).some((k) => EVIDENCE.includes(k)))
    .sort(byLabel(currentLabel, (r) => r.entity.id));
}

/**
 * What `/v1/current/{collection}` lists: its current rows, or, for a collection that falls
 * back and has no current row at all in this environment and scope, the entity rows of its type.
 */
export function expectedCurrent(b: Bundle, collection: string, scope: Scope, environment = 'stillness'): ExpectedCurrent {
  if (collection in CURRENT_RELATION) {
    const predicates = CURRENT_RELATION[collection]!;
    const rows = b.currentRelations
      // Current relations carry no cycle: uncycled, so in the default and `all` scopes only.
      .filter((r) => predicates.includes(r.predicate) && r.environment === environment && inScope(undefined, scope, b.currentCycle))
      .sort(byLabel(currentRelationLabel, relationKey));
    return { mode: 'current', rows };
  }
  const rows = currentRowsOf(b, collection, scope, environment);
  if (rows.length > 0 || !CURRENT_ENTITY[collection]!.fallback) return { mode: 'current', rows };
  const ids = new Set(expectedEntities(b, scope, (r) => r.entityType === CURRENT_ENTITY[collection]!.type, environment));
  return { mode: 'entities', rows: b.entities.filter((r) => ids.has(r.id)).sort(byLabel(entityLabel, (r) => r.id)) };
}
