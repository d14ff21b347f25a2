/**
 * Cursors: opaque base64url of a versioned JSON holding the `search_after` values of the
 * last row of a page, bound to the route and filters that produced it (a hash) and to the
 * index generation it was read from. Decoding validates everything and trusts nothing: a
 * cursor from another route, other filters, a future version or plain garbage is a 400
 * naming `cursor`, never a silently wrong page.
 */
import { createHash } from 'node:crypto';
import { ApiError } from '../errors.ts';

const VERSION = 1;
const MAX_LENGTH = 4096;

/** A sort value as Elasticsearch returns it for our sorts: keyword text, number or score. */
export type SortValue = string | number | null;

/** What one sort clause yields: a score (number) or text (keywords, and instants formatted as text). */
export type SortKind = 'number' | 'text';

export interface Cursor {
  /** Generation the page was read from. */
  generation: string;
  /** `search_after` values: one per sort field (checked against the sort by `checkPosition`). */
  after: SortValue[];
}

/** The binding of a cursor: route pattern plus every parameter that shapes the result. */
export function cursorScope(route: string, params: Record<string, unknown>): string {
  const canonical = JSON.stringify([route, Object.entries(params).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : 1))]);
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 16);
}

export function encodeCursor(cursor: Cursor, scope: string): string {
  return Buffer.from(JSON.stringify({ v: VERSION, s: scope, g: cursor.generation, a: cursor.after })).toString('base64url');
}

function invalid(reason: string): ApiError {
  return ApiError.badParameter('cursor', `Invalid cursor: ${reason}. Use the nextCursor of the previous page, unchanged.`);
}

/** Decodes a cursor for this scope; throws 400 on anything that is not one of ours. */
export function decodeCursor(raw: string, scope: string): Cursor {
  if (raw.length === 0 || raw.length > MAX_LENGTH || !/^[A-Za-z0-9_-]+$/.test(raw)) throw invalid('not a cursor of this API');
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalid('not a cursor of this API');
  }
  const { v, s, g, a } = (value ?? {}) as Record<string, unknown>;
  if (v !== VERSION) throw invalid('unknown cursor version');
  if (s !== scope) throw invalid('it belongs to another route or other filters');
  if (typeof g !== 'string' || !/^[0-9a-z-]{1,64}$/.test(g)) throw invalid('no generation');
  if (!Array.isArray(a)) throw invalid('malformed position');
  return { generation: g, after: a as SortValue[] };
}

/**
 * Checks a decoded position against the sort it will be used with: one value per clause, a
 * finite number for a score, text (or null: a row without that field) for the others, and
 * the last one — the unique tiebreaker every row has — never null. A forged position is a
 * 400 here, not an Elasticsearch error or a silently empty page.
 */
export function checkPosition(after: readonly unknown[], kinds: readonly SortKind[]): SortValue[] {
  const fits = (value: unknown, kind: SortKind, last: boolean) =>
    kind === 'number' ? typeof value === 'number' && Number.isFinite(value) : typeof value === 'string' || (value === null && !last);
  const valid = after.length === kinds.length && after.every((value, i) => fits(value, kinds[i]!, i === kinds.length - 1));
  if (!valid) throw invalid('malformed position');
  return after as SortValue[];
}
