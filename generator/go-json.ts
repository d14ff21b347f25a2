/**
 * JSON text exactly as the registry's Go writer produces it.
 *
 * `json.Encoder` escapes `<`, `>`, `&`, U+2028 and U+2029 inside strings and ends every value
 * with `\n`; struct fields keep declaration order (we build row objects in that order) while
 * map keys come out sorted (`sortKeys`). Numbers stay integers or short decimals, where Go and
 * JavaScript print the same digits. Integer-like map keys are never generated: JavaScript
 * would move them to the front.
 */

const GO_ESCAPES = /[<>&\u2028\u2029]/g;

function escapeChar(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** Applies Go's HTML-safe escaping to JSON text (only string contents can hold these characters). */
export function goEscape(json: string): string {
  return json.replace(GO_ESCAPES, escapeChar);
}

/** One compact row plus its terminating newline, as `json.Encoder.Encode` writes it. */
export function encodeLine(value: unknown): string {
  return `${goEscape(JSON.stringify(value))}\n`;
}

/** A pretty document (2-space indent, trailing newline), as `json.MarshalIndent` + newline. */
export function encodePretty(value: unknown): string {
  return `${goEscape(JSON.stringify(value, null, 2))}\n`;
}

/** A Go `map[string]any`: keys sorted bytewise at every depth; arrays keep their order. */
export function sortKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => sortKeys(item)) as T;
  if (value === null || typeof value !== 'object') return value;
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(source).sort(compareBytes)) {
    if (source[key] !== undefined) out[key] = sortKeys(source[key]);
  }
  return out as T;
}

/** Bytewise (UTF-8) order, which is Go's map-key order; equals UTF-16 order outside surrogates. */
export function compareBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
