/**
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

/** Parses an RFC 3339 timestamp; undefined when it is not one. */
export function toInstant(value: unknown): Instant | undefined {
  if (typeof value !== 'string') return undefined;
  const m = RFC3339.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac = '', zone, sign, oh, om] = m;
  const offsetMin = zone!.toUpperCase() === 'Z' ? 0 : (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  // Not Date.UTC: it maps years 0–99 to 1900–1999.
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi) - offsetMin, Number(s), 0);
  const nanos = frac.padEnd(9, '0');
  const iso = date.toISOString(); // yyyy-mm-ddThh:mm:ss.000Z, or ±yyyyyy for far years
  if (Number.isNaN(date.getTime())) return undefined;
  const ms = date.getTime() + Number(nanos.slice(0, 3));
  const text = `${iso.slice(0, -5)}.${nanos}Z`;
  if (ms < 0 || iso.startsWith('-') || iso.startsWith('+')) return { text: ms < 0 ? INSTANT_MIN : INSTANT_MAX, ms };
  return { text: text > INSTANT_MAX ? INSTANT_MAX : text, ms };
}
