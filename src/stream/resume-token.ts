/**
 * Resume tokens of the event streams (`id:` of each event, sent back as `Last-Event-ID`): a
 * position in the order rows became visible, authenticated like cursors (src/query/cursor.ts:
 * the same HMAC under the same key) and checked like them before any search.
 *
 * A position is either a row's sort values under `sort=indexedAt:asc` — its first-seen instant,
 * its `occurredAt`, its id — or only an instant: "every row first held up to here was sent"
 * (a stream that has sent every row of a generation, or nothing yet, stands there). Positions
 * do not name a generation: a row keeps its first-seen instant in every later generation, so a
 * position read in one generation means the same in the next.
 *
 * A token is bound to its feed (killmails or events), not to the filters: a client may resume
 * with other filters from where it was, and gets the rows of those after that position.
 */
import { ApiError } from '../errors.ts';
import { checkPosition, seal, unseal } from '../query/cursor.ts';

const VERSION = 1;
const MAX_LENGTH = 1024;

/** A row's place: instants as nine-digit UTC text (`…:05.100000000Z`), so text order is time order. */
export interface Position {
  indexedAt: string;
  /** The row's `occurredAt` and id; absent: every row first held up to `indexedAt`. */
  row?: { occurredAt: string; id: string };
}

/** The parameter a bad token is reported under (EventSource sends it as a header). */
export const RESUME_HEADER = 'Last-Event-ID';

/** An instant as Elasticsearch writes it (trailing zeros of the fraction dropped) → nine-digit text. */
export function nanosText(instant: string): string {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/.exec(instant);
  if (!match) throw new Error(`not an instant: ${instant}`);
  return `${match[1]}.${(match[2] ?? '').padEnd(9, '0')}Z`;
}

/** Position of a row from its `indexedAt:asc` sort values `[indexedAt, occurredAt, id]`. */
export function rowPosition(sort: readonly unknown[]): Position {
  const [indexedAt, occurredAt, id] = sort as [string, string, string];
  return { indexedAt: nanosText(indexedAt), row: { occurredAt: nanosText(occurredAt), id } };
}

/** Compares ids as Elasticsearch orders keywords: by UTF-8 bytes. */
function compareIds(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** Orders positions: by instant; at one instant an instant alone stands after every row first held at it. */
export function comparePositions(a: Position, b: Position): number {
  if (a.indexedAt !== b.indexedAt) return a.indexedAt > b.indexedAt ? 1 : -1;
  if (!a.row || !b.row) return (a.row ? 0 : 1) - (b.row ? 0 : 1);
  if (a.row.occurredAt !== b.row.occurredAt) return a.row.occurredAt > b.row.occurredAt ? 1 : -1;
  return compareIds(a.row.id, b.row.id);
}

/** Whether `row` comes after `position` in the order rows became visible. */
export const isAfter = (row: Position, position: Position): boolean => comparePositions(row, position) > 0;

/** `search_after` values of a row position (an instant alone has none: it is a `since_indexed` bound). */
export function searchAfter(position: Position): string[] | undefined {
  return position.row && [position.indexedAt, position.row.occurredAt, position.row.id];
}

function invalid(reason: string): ApiError {
  return ApiError.badParameter(RESUME_HEADER, `Invalid ${RESUME_HEADER}: ${reason}. Send the id of the last event received, unchanged.`);
}

/** `<base64url payload>.<base64url MAC>`; `feed` is the stream's index (`killmails`, `events`). */
export function encodeResumeToken(position: Position, feed: string, key: string): string {
  const p = position.row ? [position.indexedAt, position.row.occurredAt, position.row.id] : [position.indexedAt];
  return seal({ v: VERSION, f: feed, p }, key);
}

/** Decodes a token of this feed; anything else — edited, forged, of another feed, garbage — is a 400 naming `Last-Event-ID`. */
export function decodeResumeToken(raw: string, feed: string, key: string): Position {
  const value = unseal(raw, key, 'an event id of this API', invalid, MAX_LENGTH);
  const { v, f, p } = (value ?? {}) as Record<string, unknown>;
  if (v !== VERSION) throw invalid('unknown version');
  if (f !== feed) throw invalid('it belongs to another stream');
  if (!Array.isArray(p) || (p.length !== 1 && p.length !== 3)) throw invalid('malformed position');
  try {
    checkPosition(p, p.length === 1 ? ['instant'] : ['instant', 'instant', 'keyword']);
  } catch {
    throw invalid('malformed position');
  }
  const [indexedAt, occurredAt, id] = p as [string, string?, string?];
  return { indexedAt: nanosText(indexedAt), ...(occurredAt !== undefined && { row: { occurredAt: nanosText(occurredAt), id: id! } }) };
}
