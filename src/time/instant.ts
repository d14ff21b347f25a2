/**
 * Instants, parsed strictly in one place. `calendarMs` is the one check every grammar of the
 * project ends in — the loader's (below), `since`/`until`/`since_indexed` (src/query/time-range.ts),
 * cursor positions (src/query/cursor.ts) and `CYCLE_STARTS` (src/config.ts): each reads its own
 * text, then its fields must be a real calendar time (no 30th of February, no 25th hour, no
 * minute 60, an offset of at most 23:59) that reads back unchanged. JavaScript's Date would move
 * such a time on (30 February → 2 March) instead of refusing it.
 *
 * Timestamps of the export format → instants Elasticsearch can sort exactly.
 *
 * Export times are Go RFC 3339 strings with 0–9 fractional digits and any zone offset, so
 * comparing them as text mis-orders rows. We normalise to UTC with nine fractional digits
 * (`date_nanos` keeps all of them). `date_nanos` only spans 1970–2262: the Go zero instant
 * `0001-01-01T00:00:00Z` and other out-of-range values are clamped to those bounds in the
 * indexed copy only; the row keeps its original text.
 */

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|z|([+-])(\d{2}):(\d{2}))$/;
/** The `date_nanos` range, as normalized text (which compares like the instants). */
export const INSTANT_MIN = '1970-01-01T00:00:00.000000000Z';
export const INSTANT_MAX = '2262-04-11T23:47:16.854775807Z';

/** A parsed instant: UTC text with nine fractional digits, and epoch milliseconds. */
export interface Instant {
  text: string;
  ms: number;
}

/** The fields of a calendar time as a grammar read them (all decimal text or numbers), with its zone offset. */
export interface CalendarFields {
  year: number | string;
  month: number | string;
  day: number | string;
  hour: number | string;
  minute: number | string;
  second: number | string;
  /** Offset from UTC: sign and hours and minutes of `±hh:mm`; omitted for UTC. */
  offset?: { sign: '+' | '-'; hours: number | string; minutes: number | string };
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days in a month of the proleptic Gregorian calendar. */
function daysIn(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}

/**
 * Epoch milliseconds (whole seconds) of a real calendar time, or undefined: every field in its
 * range, the day one the month has (no 30th of February, no 29th in a common year), an offset of
 * at most 23:59. Arithmetic, not Date round trips: the loader checks every timestamp of a load.
 */
export function calendarMs(fields: CalendarFields): number | undefined {
  const y = Number(fields.year), mo = Number(fields.month), d = Number(fields.day), h = Number(fields.hour), mi = Number(fields.minute), s = Number(fields.second);
  if (h > 23 || mi > 59 || s > 59 || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo)) return undefined;
  const oh = Number(fields.offset?.hours ?? 0);
  const om = Number(fields.offset?.minutes ?? 0);
  if (oh > 23 || om > 59) return undefined;
  // Date.UTC maps years 0–99 to 1900–1999: those are set field by field.
  let at: number;
  if (y >= 100) at = Date.UTC(y, mo - 1, d, h, mi, s);
  else {
    const date = new Date(0);
    date.setUTCFullYear(y, mo - 1, d);
    date.setUTCHours(h, mi, s, 0);
    at = date.getTime();
  }
  const offsetMin = (fields.offset?.sign === '-' ? -1 : 1) * (oh * 60 + om);
  return at - offsetMin * 60_000;
}

/** Parses an RFC 3339 timestamp (the loader's grammar); undefined when it is not one, or not a real time. */
export function toInstant(value: unknown): Instant | undefined {
  if (typeof value !== 'string') return undefined;
  const m = RFC3339.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac = '', zone, sign, oh, om] = m;
  const utc = zone!.toUpperCase() === 'Z';
  const at = calendarMs({ year: y!, month: mo!, day: d!, hour: h!, minute: mi!, second: s!, offset: utc ? undefined : { sign: sign as '+' | '-', hours: oh!, minutes: om! } });
  if (at === undefined) return undefined;
  const nanos = frac.padEnd(9, '0');
  const ms = at + Number(nanos.slice(0, 3));
  // In UTC the text is the fields as written (most export times are); else formatted from the instant.
  const iso = utc ? `${y}-${mo}-${d}T${h}:${mi}:${s}.000Z` : new Date(at).toISOString(); // or ±yyyyyy for far years
  const text = `${iso.slice(0, -5)}.${nanos}Z`;
  if (ms < 0 || iso.startsWith('-') || iso.startsWith('+')) return { text: ms < 0 ? INSTANT_MIN : INSTANT_MAX, ms };
  return { text: text > INSTANT_MAX ? INSTANT_MAX : text, ms };
}

/** An ISO 8601 instant with a zone, any number of fraction digits: the grammar of `since`, `until`, `since_indexed` and `CYCLE_STARTS`. */
const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/** An ISO instant as whole-second epoch milliseconds and its fraction digits (any number), or undefined. */
export function parseIsoInstant(text: string): { ms: number; fraction: string } | undefined {
  const m = ISO_INSTANT.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, fraction = '', sign, oh, om] = m;
  const ms = calendarMs({ year: y!, month: mo!, day: d!, hour: h!, minute: mi!, second: s!, offset: sign ? { sign: sign as '+' | '-', hours: oh!, minutes: om! } : undefined });
  return ms === undefined ? undefined : { ms, fraction };
}
