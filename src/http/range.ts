/**
 * The `Range` header of a download (RFC 9110 §14): one byte range, or nothing. A malformed
 * header or several ranges are ignored (the whole file is sent, as the RFC allows); a range
 * that starts past the end cannot be satisfied (416).
 */
export type RangeRequest = { start: number; end: number } | 'unsatisfiable' | undefined;

export function parseRange(header: string | undefined, size: number): RangeRequest {
  const match = header === undefined ? null : /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  if (size === 0) return 'unsatisfiable';
  const [first, last] = [match[1]!, match[2]!];
  if (first === '') {
    // A suffix: the last N bytes.
    const length = Number(last);
    if (length === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
