/**
 * Cursors: opaque base64url of a versioned JSON holding the `search_after` values of the
 * last row of a page, bound to the route and filters that produced it (a hash) and to the
 * index generation it was read from. Decoding validates everything and trusts nothing: a
 * cursor from another route, other filters, a future version or plain garbage is a 400
 * naming `cursor`, never a silently wrong page.
 */
import { createHash } from 'node:crypto';
import { ApiError } from '../http/errors.ts';

const VERSION = 1;
const MAX_LENGTH = 4096;

/** A sort value as Elasticsearch returns it for our sorts: keyword text, number or score. */
export type SortValue = string | number | null;

export interface Cursor {
  /** Generation the page was read from. */
  generation: string;
  /** `search_after` values: one per sort field. */
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

/** Decodes a cursor for this scope and a sort of `fields` values; throws 400 on anything else. */
export function decodeCursor(raw: string, scope: string, fields: number): Cursor {
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
  const valid = Array.isArray(a) && a.length === fields && a.every((x) => x === null || typeof x === 'string' || (typeof x === 'number' && Number.isFinite(x)));
  if (!valid) throw invalid('malformed position');
  return { generation: g, after: a as SortValue[] };
}
