/**
 * Cursors: opaque, URL-safe tokens holding the `search_after` values of the last row of a
 * page, bound to the route and filters that produced it (a hash) and to the index generation
 * it was read from, and authenticated with an HMAC under the configured key.
 *
 * Decoding trusts nothing: a token whose MAC does not verify (edited, forged, from another
 * deployment), from another route or other filters, of another version or plain garbage is a
 * 400 naming `cursor` before any search. Even an authentic position is checked against the
 * type and range of the sort it will be used with (`checkPosition`), so no value can reach
 * Elasticsearch that it would refuse.
 *
 * A cursor also carries the first page's count of matching rows (`meta.count`): its
 * generation never changes, so the later pages answer the same number without counting again
 * (and can still be narrowed to their position). Cursors issued before counts have none; their
 * pages count afresh.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../errors.ts';
import { INSTANT_MAX, INSTANT_MIN, calendarMs } from '../time/instant.ts';

const VERSION = 2;
const MAX_LENGTH = 4096;
/** MAC bytes kept: 128 bits. */
const MAC_BYTES = 16;

/** A sort value as Elasticsearch returns it for our sorts: keyword text, an instant as text, a score. */
export type SortValue = string | number | null;

/** What one sort clause yields: a score, keyword text, or an instant formatted as text. */
export type SortKind = 'score' | 'keyword' | 'instant';

/** The number of rows a list matches: exact, or a lower bound where counting stopped. */
export interface Count {
  value: number;
  exact: boolean;
}

export interface Cursor {
  /** Generation the page was read from. */
  generation: string;
  /** `search_after` values: one per sort field (checked against the sort by `checkPosition`). */
  after: SortValue[];
  /** The walk's count, taken on its first page. */
  count?: Count;
}

/**
 * The binding of a cursor: route pattern plus every parameter that shapes the result. Absent
 * parameters are left out and a one-value list (`kind=a`) binds as that value, so cursors
 * issued before lists and new parameters existed still verify.
 */
export function cursorScope(route: string, params: Record<string, unknown>): string {
  const values = Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => [k, Array.isArray(v) && v.length === 1 ? v[0] : v] as const);
  const canonical = JSON.stringify([route, values.sort(([a], [b]) => (a < b ? -1 : 1))]);
  return hash('sha256', canonical, 'base64url').slice(0, 16);
}

/** SHA-256's block: HMAC pads its key to it. */
const BLOCK = 64;
/** Each key's inner and outer padded blocks (RFC 2104), worked out once: there is one key per deployment. */
const PADS = new Map<string, { inner: Uint8Array; outer: Uint8Array }>();

function padsOf(key: string): { inner: Uint8Array; outer: Uint8Array } {
  let pads = PADS.get(key);
  if (!pads) {
    const bytes = Buffer.from(key);
    const block = Buffer.alloc(BLOCK);
    (bytes.length > BLOCK ? hash('sha256', bytes, 'buffer') : bytes).copy(block);
    pads = { inner: block.map((b) => b ^ 0x36), outer: block.map((b) => b ^ 0x5c) };
    PADS.set(key, pads);
  }
  return pads;
}

/**
 * HMAC-SHA256 (RFC 2104) as two one-shot hashes over the key's padded blocks: the same MAC as
 * `createHmac('sha256', key)` (a unit test holds them equal), without building an Hmac stream
 * and its OpenSSL context on every page: under load that context costs the gateway a few
 * percent of an uncached page, which a tight loop does not show.
 */
export function mac(payload: string, key: string): Buffer {
  const { inner, outer } = padsOf(key);
  const innerHash = hash('sha256', Buffer.concat([inner, Buffer.from(payload)]), 'buffer');
  return hash('sha256', Buffer.concat([outer, innerHash]), 'buffer').subarray(0, MAC_BYTES);
}

/** `<base64url JSON>.<base64url MAC>` of `value`: what cursors and stream event ids are made of. */
export function seal(value: unknown, key: string): string {
  const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${payload}.${mac(payload, key).toString('base64url')}`;
}

/**
 * The value a sealed token carries, once its MAC proves it was issued with `key`, unchanged;
 * anything else is `invalid(reason)` (`what` names the token in the reason: "a cursor of this API").
 */
export function unseal(raw: string, key: string, what: string, invalid: (reason: string) => Error, maxLength = MAX_LENGTH): unknown {
  const match = raw.length <= maxLength ? /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(raw) : null;
  if (!match) throw invalid(`not ${what}`);
  const [, payload, signature] = match as unknown as [string, string, string];
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== MAC_BYTES || !timingSafeEqual(given, mac(payload, key))) throw invalid('it was altered or not issued here');
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw invalid(`not ${what}`);
  }
}

export function encodeCursor(cursor: Cursor, scope: string, key: string): string {
  const count = cursor.count && { c: [cursor.count.value, cursor.count.exact ? 1 : 0] };
  return seal({ v: VERSION, s: scope, g: cursor.generation, a: cursor.after, ...count }, key);
}

function invalid(reason: string): ApiError {
  return ApiError.badParameter('cursor', `Invalid cursor: ${reason}. Use the nextCursor of the previous page, unchanged.`);
}

/** Decodes a cursor for this scope; throws 400 on anything that is not one of ours, unchanged. */
export function decodeCursor(raw: string, scope: string, key: string): Cursor {
  const value = unseal(raw, key, 'a cursor of this API', invalid);
  const { v, s, g, a, c } = (value ?? {}) as Record<string, unknown>;
  if (v !== VERSION) throw invalid('unknown cursor version');
  if (s !== scope) throw invalid('it belongs to another route or other filters');
  if (typeof g !== 'string' || !/^[0-9a-z-]{1,64}$/.test(g)) throw invalid('no generation');
  if (!Array.isArray(a)) throw invalid('malformed position');
  if (c === undefined) return { generation: g, after: a as SortValue[] };
  const [n, exact] = Array.isArray(c) && c.length === 2 ? c : [];
  if (!Number.isSafeInteger(n) || (n as number) < 0 || (exact !== 0 && exact !== 1)) throw invalid('malformed count');
  return { generation: g, after: a as SortValue[], count: { value: n as number, exact: exact === 1 } };
}

/** `date_nanos` sort values as `strict_date_optional_time_nanos` writes them, in UTC. */
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/;

/** An instant Elasticsearch can parse and hold: a real calendar time within `date_nanos` range. */
function isInstant(value: unknown): boolean {
  const match = typeof value === 'string' ? INSTANT.exec(value) : null;
  if (!match) return false;
  const [, year, month, day, hour, minute, second] = match;
  if (calendarMs({ year: year!, month: month!, day: day!, hour: hour!, minute: minute!, second: second! }) === undefined) return false;
  const normalized = `${(value as string).slice(0, 19)}.${(match[7] ?? '').padEnd(9, '0')}Z`;
  return normalized >= INSTANT_MIN && normalized <= INSTANT_MAX;
}

/**
 * Checks a decoded position against the sort it will be used with: one value per clause, a
 * finite number for a score, a valid in-range instant for a `date_nanos` field, text (or null:
 * a row without that field) for a keyword, and the last one — the unique tiebreaker every row
 * has — never null.
 */
export function checkPosition(after: readonly unknown[], kinds: readonly SortKind[]): SortValue[] {
  const fits = (value: unknown, kind: SortKind, last: boolean) => {
    if (kind === 'score') return typeof value === 'number' && Number.isFinite(value);
    if (kind === 'instant') return isInstant(value);
    return typeof value === 'string' || (value === null && !last);
  };
  const valid = after.length === kinds.length && after.every((value, i) => fits(value, kinds[i]!, i === kinds.length - 1));
  if (!valid) throw invalid('malformed position');
  return after as SortValue[];
}
