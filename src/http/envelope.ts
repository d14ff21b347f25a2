/** The response envelope every JSON route shares: `{data, meta, nextCursor?}` and `{error, meta}`. */
import type { ApiError } from '../errors.ts';
import type { GenerationDoc } from '../indices/generation.ts';

export interface Meta {
  registry: string;
  apiVersion: 'v1';
  /** The bundle the answer was computed from (absent where nothing was read: health, errors before a read). */
  bundleId?: string;
  /** That bundle's `generatedAt` (its manifest's), or null where the manifest said none. */
  bundleGeneratedAt?: string | null;
}

/** The bundle an answer was read from, as `meta` and the Registry-Bundle-* headers name it. */
export interface BundleStamp {
  bundleId: string;
  generatedAt: string | null;
}

export const bundleOf = (generation: Pick<GenerationDoc, 'bundleId' | 'generatedAt'>): BundleStamp => ({ bundleId: generation.bundleId, generatedAt: generation.generatedAt ?? null });

/** The headers that name it on every answer read from a generation, where `meta` cannot (CSV, NDJSON, files, event streams). */
export const BUNDLE_ID_HEADER = 'Registry-Bundle-Id';
export const BUNDLE_GENERATED_AT_HEADER = 'Registry-Bundle-Generated-At';

/** Those headers' fields for `bundle` (a bundle whose manifest names no `generatedAt` has only its id). */
export function bundleHeaderFields(bundle: BundleStamp): Record<string, string> {
  return { [BUNDLE_ID_HEADER]: bundle.bundleId, ...(bundle.generatedAt && { [BUNDLE_GENERATED_AT_HEADER]: bundle.generatedAt }) };
}

/** The fields that name `bundle` in `meta` and in a stream's `bundle` event. */
export const bundleFields = (bundle: BundleStamp): Pick<Meta, 'bundleId' | 'bundleGeneratedAt'> => ({ bundleId: bundle.bundleId, bundleGeneratedAt: bundle.generatedAt });

/** `meta` of an answer read from `bundle`: the service's, then the bundle's. */
export function stampedMeta(meta: Meta, bundle: BundleStamp | undefined): Meta {
  return bundle ? { ...meta, ...bundleFields(bundle) } : meta;
}

export function createMeta(registry: string): Meta {
  return Object.freeze({ registry, apiVersion: 'v1' });
}

export interface Envelope<T> {
  data: T;
  meta: Meta;
  nextCursor?: string;
}

/** Key order as the reference writes it: data, meta, nextCursor (omitted on the last page). */
export function toEnvelope<T>(data: T, meta: Meta, nextCursor?: string): Envelope<T> {
  return nextCursor === undefined ? { data, meta } : { data, meta, nextCursor };
}

/**
 * The same envelope around rows that are already JSON bytes (passed through from the index):
 * `{"data":[<row>,…],"meta":…,"nextCursor"?:…}`, byte for byte what `toEnvelope` would serialize
 * for the parsed rows, up to the rows' own formatting. Written into one buffer of the length it
 * adds up to: a page is copied once.
 */
export function toRawEnvelope(rows: readonly Buffer[], meta: Meta, nextCursor?: string): Buffer {
  const tail = Buffer.from(`],"meta":${JSON.stringify(meta)}${nextCursor === undefined ? '' : `,"nextCursor":${JSON.stringify(nextCursor)}`}}`);
  let length = HEAD.length + tail.length + Math.max(0, rows.length - 1);
  for (const row of rows) length += row.length;
  const out = Buffer.allocUnsafe(length);
  let at = HEAD.copy(out, 0);
  rows.forEach((row, i) => {
    if (i > 0) out[at++] = 0x2c;
    at += row.copy(out, at);
  });
  tail.copy(out, at);
  return out;
}

const HEAD = Buffer.from('{"data":[');

export function toErrorBody(error: ApiError, meta: Meta) {
  const { code, message, details } = error;
  return { error: details === undefined ? { code, message } : { code, message, details }, meta };
}
