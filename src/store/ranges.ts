/**
 * The headers of a resumed read, and reading the answer to one: pure, no I/O.
 *
 * A read that broke after `offset` bytes asks for `Range: bytes=<offset>-[end]`, with the
 * object's validator as a precondition so a changed object is refused (412) rather than
 * spliced: `If-Match` with a strong ETag, else `If-Unmodified-Since` with its Last-Modified
 * (a weak ETag can never satisfy `If-Match`, RFC 9110 §13.1.1).
 */

/** What identifies one version of a stored object. */
export interface Validator {
  etag?: string;
  lastModified?: string;
}

/** `bytes=<start>-` or `bytes=<start>-<end>` (inclusive end, as HTTP counts). */
export function rangeHeader(start: number, end?: number): string {
  return end === undefined ? `bytes=${start}-` : `bytes=${start}-${end}`;
}

export function isStrongEtag(etag: string | undefined): etag is string {
  return etag !== undefined && /^"[^"]*"$/.test(etag);
}

/** Preconditions that make the store refuse a different version of the object. */
export function preconditionHeaders(validator: Validator | undefined): Record<string, string> {
  if (isStrongEtag(validator?.etag)) return { 'If-Match': validator.etag };
  if (validator?.lastModified) return { 'If-Unmodified-Since': validator.lastModified };
  return {};
}

/** The headers of a read from `offset` (a whole read when `offset` is 0 and no end is asked). */
export function readHeaders(offset: number, end: number | undefined, validator: Validator | undefined, ranges: boolean): Record<string, string> {
  const headers = preconditionHeaders(validator);
  if (ranges && (offset > 0 || end !== undefined)) headers.Range = rangeHeader(offset, end);
  return headers;
}

/** `Content-Range: bytes 10-99/1000` → its numbers (`size` undefined for `/*`). */
export function parseContentRange(header: string | undefined): { start: number; end: number; size: number | undefined } | undefined {
  const match = header === undefined ? null : /^\s*bytes\s+(\d+)-(\d+)\/(\d+|\*)\s*$/i.exec(header);
  if (!match) return undefined;
  const [start, end] = [Number(match[1]), Number(match[2])];
  if (end < start) return undefined;
  return { start, end, size: match[3] === '*' ? undefined : Number(match[3]) };
}
