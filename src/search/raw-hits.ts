/**
 * The rows of a search response as the bytes Elasticsearch sent, without parsing them.
 *
 * A list page passes each hit's `_source.row` through verbatim: parsing a page of large rows
 * (events) only to serialize them again was most of the gateway's time on those routes. This
 * walks the response's structure — objects, arrays, strings with their escapes — and keeps
 * the byte ranges of `hits.hits[]._source.row` and `hits.hits[]._source.sort`, whatever the key
 * order. It validates only as much structure as it walks: the bytes come from Elasticsearch, and
 * anything it cannot walk is an error, never a partial page.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export interface RawHit {
  /** The `_source.row` value, as sent. */
  row: Buffer;
  /** The `sort` array, as sent (parse it when a cursor needs it). */
  sort: Buffer | undefined;
}

export class RawHitsError extends Error {
  override name = 'RawHitsError';
}

function isSpace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function skipSpace(buf: Buffer, at: number): number {
  while (isSpace(buf[at])) at += 1;
  return at;
}

/** Index just past the string that opens at `at` (`buf[at]` is `"`). */
function endOfString(buf: Buffer, at: number): number {
  for (let from = at + 1; ; ) {
    const quote = buf.indexOf(QUOTE, from);
    if (quote === -1) throw new RawHitsError('unterminated string');
    // A quote is escaped when an odd number of backslashes precede it.
    let slashes = 0;
    while (buf[quote - 1 - slashes] === BACKSLASH) slashes += 1;
    if (slashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** Index just past the JSON value that starts at `at` (after any space). */
function endOfValue(buf: Buffer, at: number): number {
  const first = buf[at];
  if (first === QUOTE) return endOfString(buf, at);
  if (first === 0x7b || first === 0x5b) {
    let depth = 0;
    for (let i = at; i < buf.length; ) {
      const byte = buf[i]!;
      if (byte === QUOTE) {
        i = endOfString(buf, i);
        continue;
      }
      if (byte === 0x7b || byte === 0x5b) depth += 1;
      else if (byte === 0x7d || byte === 0x5d) {
        depth -= 1;
        if (depth === 0) return i + 1;
      }
      i += 1;
    }
    throw new RawHitsError('unterminated object or array');
  }
  // A number, true, false or null: up to the next delimiter.
  let i = at;
  while (i < buf.length && buf[i] !== 0x2c && buf[i] !== 0x7d && buf[i] !== 0x5d && !isSpace(buf[i])) i += 1;
  if (i === at) throw new RawHitsError(`unexpected byte at ${at}`);
  return i;
}

/** The members of the object at `at`: key → [start, end) of its value. */
function members(buf: Buffer, at: number): Map<string, [number, number]> {
  if (buf[at] !== 0x7b) throw new RawHitsError(`object expected at ${at}`);
  const found = new Map<string, [number, number]>();
  let i = skipSpace(buf, at + 1);
  if (buf[i] === 0x7d) return found;
  for (;;) {
    if (buf[i] !== QUOTE) throw new RawHitsError(`key expected at ${i}`);
    const keyEnd = endOfString(buf, i);
    const key = JSON.parse(buf.toString('utf8', i, keyEnd)) as string;
    i = skipSpace(buf, keyEnd);
    if (buf[i] !== 0x3a) throw new RawHitsError(`colon expected at ${i}`);
    const start = skipSpace(buf, i + 1);
    const end = endOfValue(buf, start);
    found.set(key, [start, end]);
    i = skipSpace(buf, end);
    if (buf[i] === 0x7d) return found;
    if (buf[i] !== 0x2c) throw new RawHitsError(`comma expected at ${i}`);
    i = skipSpace(buf, i + 1);
  }
}

/** The elements of the array at `at`, as [start, end) ranges. */
function elements(buf: Buffer, at: number): [number, number][] {
  if (buf[at] !== 0x5b) throw new RawHitsError(`array expected at ${at}`);
  const found: [number, number][] = [];
  let i = skipSpace(buf, at + 1);
  if (buf[i] === 0x5d) return found;
  for (;;) {
    const end = endOfValue(buf, i);
    found.push([i, end]);
    i = skipSpace(buf, end);
    if (buf[i] === 0x5d) return found;
    if (buf[i] !== 0x2c) throw new RawHitsError(`comma expected at ${i}`);
    i = skipSpace(buf, i + 1);
  }
}

/**
 * The hits of a search response (`{"hits":{"hits":[{"_source":{"row":…},"sort":[…]},…]}}`,
 * as `filter_path` leaves it; `{}` when nothing matched).
 */
export function rawHits(buf: Buffer): RawHit[] {
  const root = members(buf, skipSpace(buf, 0));
  const outer = root.get('hits');
  if (!outer) return [];
  const hits = members(buf, outer[0]).get('hits');
  if (!hits) return [];
  return elements(buf, hits[0]).map(([start]) => {
    const hit = members(buf, start);
    const source = hit.get('_source');
    const row = source && members(buf, source[0]).get('row');
    if (!row) throw new RawHitsError('a hit without _source.row');
    const sort = hit.get('sort');
    return { row: buf.subarray(row[0], row[1]), sort: sort && buf.subarray(sort[0], sort[1]) };
  });
}
