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
import { INSTANT_MAX, INSTANT_MIN, parseIsoInstant } from '../time/instant.ts';
import { NANOS_FORMAT, type Query } from './list.ts';

/** A bound as `date_nanos` text, and whether the given instant fell exactly on a nanosecond. */
export interface TimeBound {
  at: string;
  onNanosecond: boolean;
}

/** Parses the text of `since`/`until`/`since_indexed` (already matching the declared pattern); a 400 naming `name` otherwise. */
export function toTimeBound(name: string, text: string): TimeBound {
  const parsed = parseIsoInstant(text);
  if (!parsed) throw ApiError.badParameter(name, `${name} must be a real ISO 8601 instant with a zone, e.g. 2026-06-01T00:00:00Z, got ${JSON.stringify(text.slice(0, 64))}.`);
  const utc = new Date(parsed.ms).toISOString();
  const nanos = parsed.fraction.slice(0, 9).padEnd(9, '0');
  const at = `${utc.slice(0, 19)}.${nanos}Z`;
  // A zone can carry year 9999 into 10000 (`+010000-…`) or year 0 before it (`-000001-…`).
  if (utc.startsWith('+') || at > INSTANT_MAX) return { at: INSTANT_MAX, onNanosecond: true };
  if (utc.startsWith('-') || at < INSTANT_MIN) return { at: INSTANT_MIN, onNanosecond: true };
  return { at, onNanosecond: !/[1-9]/.test(parsed.fraction.slice(9)) };
}

/** The later of two bounds (either may be absent); `a` where they are the same instant. */
export const laterBound = (a: TimeBound | undefined, b: TimeBound | undefined): TimeBound | undefined => (a === undefined ? b : b === undefined || a.at >= b.at ? a : b);

/** Rows strictly after a bound (`since_indexed`): a row on the bound's truncation is not after it either. */
export function toAfter(field: string, after: TimeBound | undefined): Query[] {
  return after === undefined ? [] : [{ range: { [field]: { format: NANOS_FORMAT, gt: after.at } } }];
}

/** The range filter of `since` (inclusive) and `until` (exclusive) on an instant field, if either is given; a range upside down is a 400 naming `until`. */
export function toTimeRange(field: string, since: TimeBound | undefined, until: TimeBound | undefined): Query[] {
  if (since === undefined && until === undefined) return [];
  if (since !== undefined && until !== undefined && until.at < since.at) throw ApiError.badParameter('until', 'until is before since: give a range whose end is at or after its start.');
  const range: Record<string, string> = { format: NANOS_FORMAT };
  if (since !== undefined) range[since.onNanosecond ? 'gte' : 'gt'] = since.at;
  if (until !== undefined) range[until.onNanosecond ? 'lt' : 'lte'] = until.at;
  return [{ range: { [field]: range } }];
}
