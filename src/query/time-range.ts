/**
 * `since` and `until` as instants: parsed strictly (a real calendar time, any zone offset, any
 * number of fraction digits), normalized to the nine-digit UTC text `date_nanos` compares, and
 * turned into one range filter. Never compared as text: `…:05.1Z` and `…:05.100Z` are the same
 * instant, and `+02:00` is two hours before `Z`.
 *
 * Rows sit on whole nanoseconds, so an instant given with more digits is between two of them:
 * `since` then admits rows after its truncation (`gt`), `until` rows up to it (`lte`). Instants
 * outside what `date_nanos` holds (1970–2262) are clamped, which changes no answer.
 */
import { ApiError } from '../errors.ts';
import { INSTANT_MAX, INSTANT_MIN } from '../indices/instant.ts';
import { NANOS_FORMAT, type Query } from './list.ts';

/** A bound as `date_nanos` text, and whether the given instant fell exactly on a nanosecond. */
export interface TimeBound {
  at: string;
  onNanosecond: boolean;
}

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/** Parses the text of `since`/`until` (already matching the declared pattern); a 400 naming `name` otherwise. */
export function toTimeBound(name: string, text: string): TimeBound {
  const m = INSTANT.exec(text);
  const invalid = () => ApiError.badParameter(name, `${name} must be a real ISO 8601 instant with a zone, e.g. 2026-06-01T00:00:00Z, got ${JSON.stringify(text.slice(0, 64))}.`);
  if (!m) throw invalid();
  const [, y, mo, d, h, mi, s, fraction = '', sign, oh, om] = m;
  const fields = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  const offset = sign === undefined ? 0 : (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  if (Number(oh ?? 0) > 23 || Number(om ?? 0) > 59) throw invalid();
  // Built field by field (Date.UTC maps years 0–99 to 1900–1999) and read back: a 30th of
  // February or a 25th hour does not survive the round trip.
  const local = new Date(0);
  local.setUTCFullYear(fields[0], fields[1] - 1, fields[2]);
  local.setUTCHours(fields[3], fields[4], fields[5], 0);
  const back = [local.getUTCFullYear(), local.getUTCMonth() + 1, local.getUTCDate(), local.getUTCHours(), local.getUTCMinutes(), local.getUTCSeconds()];
  if (back.some((value, i) => value !== fields[i])) throw invalid();
  const utc = new Date(local.getTime() - offset * 60_000).toISOString();
  const nanos = fraction.slice(0, 9).padEnd(9, '0');
  const at = `${utc.slice(0, 19)}.${nanos}Z`;
  // A zone can carry year 9999 into 10000 (`+010000-…`) or year 0 before it (`-000001-…`).
  if (utc.startsWith('+') || at > INSTANT_MAX) return { at: INSTANT_MAX, onNanosecond: true };
  if (at < INSTANT_MIN) return { at: INSTANT_MIN, onNanosecond: true };
  return { at, onNanosecond: !/[1-9]/.test(fraction.slice(9)) };
}

/** Rows strictly after a bound (`since_indexed`): a row on the bound's truncation is not after it either. */
export function toAfter(field: string, after: TimeBound | undefined): Query[] {
  return after === undefined ? [] : [{ range: { [field]: { format: NANOS_FORMAT, gt: after.at } } }];
}

/** The range filter of `since` (inclusive) and `until` (exclusive) on an instant field, if either is given. */
export function toTimeRange(field: string, since: TimeBound | undefined, until: TimeBound | undefined): Query[] {
  if (since === undefined && until === undefined) return [];
  const range: Record<string, string> = { format: NANOS_FORMAT };
  if (since !== undefined) range[since.onNanosecond ? 'gte' : 'gt'] = since.at;
  if (until !== undefined) range[until.onNanosecond ? 'lt' : 'lte'] = until.at;
  return [{ range: { [field]: range } }];
}
