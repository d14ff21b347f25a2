/**
 * The rows of a search response as the bytes Elasticsearch sent, without parsing them.
 *
 * A list page passes each hit's `_source.row` through verbatim: parsing a page of large rows
 * (events) only to serialize them again was most of the gateway's time on those routes. This
 * walks the response's structure — objects, arrays, strings with their escapes — and keeps
 * the byte ranges of `hits.hits[]._source.row` and `hits.hits[]._source.sort`, whatever the key
 * order (rows are cut rather than walked where that is sure: see `rawHits`); a row kept as doc
 * values (`hits.hits[].fields.row[0]`, base64: see `rowsInDocValues`) is decoded. It validates only as
 * much structure as it walks: the bytes come from Elasticsearch, and anything it cannot walk is
 * an error, never a partial page.
 */

import { ROW } from '../indices/description.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export interface RawHit {
  /** The `_source.row` value as sent, or the row's doc-values bytes decoded. */
  row: Buffer;
  /** The `sort` array, as sent (parse it when a cursor needs it). */
  sort: Buffer | undefined;
}

/** The number of matching rows, when the search tracked it. */
export interface TotalHits {
  value: number;
  /** `eq`: exact; `gte`: a lower bound (tracking stopped there). */
  relation: 'eq' | 'gte';
}

/** A page of hits and, when the search counted them, the matching rows. */
export interface RawPage {
  hits: RawHit[];
  total?: TotalHits;
}

export class RawHitsError extends Error {
  override name = 'RawHitsError';
}

/**
 * The walk reads the bytes as a latin1 string: offsets stay byte offsets, and a string's
 * `indexOf` and `charCodeAt` are the fastest scans V8 has, faster than `JSON.parse` alone and
 * far faster than a byte walk through `Buffer` calls.
 */
type Text = string;

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

function skipSpace(text: Text, at: number): number {
  while (isSpace(text.charCodeAt(at))) at += 1;
  return at;
}

/** Index just past the string that opens at `at` (`text[at]` is `"`). */
function endOfString(text: Text, at: number): number {
  let quote = text.indexOf('"', at + 1);
  // A quote is escaped when an odd number of backslashes precede it: rare, so checked only then.
  while (quote !== -1 && text.charCodeAt(quote - 1) === BACKSLASH) {
    let slashes = 1;
    while (text.charCodeAt(quote - 1 - slashes) === BACKSLASH) slashes += 1;
    if (slashes % 2 === 0) break;
    quote = text.indexOf('"', quote + 1);
  }
  if (quote === -1) throw new RawHitsError('unterminated string');
  return quote + 1;
}

/** Index just past the object or array that opens at `at`. */
function endOfContainer(text: Text, at: number): number {
  const length = text.length;
  let depth = 0;
  for (let i = at; i < length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      i = endOfString(text, i) - 1;
    } else if (code === 0x7b || code === 0x5b) {
      depth += 1;
    } else if (code === 0x7d || code === 0x5d) {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  throw new RawHitsError('unterminated object or array');
}

/** Index just past the JSON value that starts at `at` (after any space). */
function endOfValue(text: Text, at: number): number {
  const first = text.charCodeAt(at);
  if (first === QUOTE) return endOfString(text, at);
  if (first === 0x7b || first === 0x5b) return endOfContainer(text, at);
  // A number, true, false or null: up to the next delimiter.
  let i = at;
  for (let code = text.charCodeAt(i); i < text.length && code !== 0x2c && code !== 0x7d && code !== 0x5d && !isSpace(code); code = text.charCodeAt(++i));
  if (i === at) throw new RawHitsError(`unexpected byte at ${at}`);
  return i;
}

/**
 * Walks the object at `at` once: `member` gets each key and where its value starts, and returns
 * where that value ends (skipping it, or walking into it). Returns where the object ends.
 */
function walkObject(text: Text, at: number, member: (key: string, start: number) => number): number {
  if (text.charCodeAt(at) !== 0x7b) throw new RawHitsError(`object expected at ${at}`);
  let i = skipSpace(text, at + 1);
  if (text.charCodeAt(i) === 0x7d) return i + 1;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) throw new RawHitsError(`key expected at ${i}`);
    const keyEnd = endOfString(text, i);
    // Keys looked for here are ASCII (`hits`, `_source`, `row`, `sort`); others are only skipped.
    const key = text.slice(i + 1, keyEnd - 1);
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== 0x3a) throw new RawHitsError(`colon expected at ${i}`);
    i = skipSpace(text, member(key, skipSpace(text, i + 1)));
    if (text.charCodeAt(i) === 0x7d) return i + 1;
    if (text.charCodeAt(i) !== 0x2c) throw new RawHitsError(`comma expected at ${i}`);
    i = skipSpace(text, i + 1);
  }
}

/** Walks the array at `at` once, `element` returning where each element ends. Returns where the array ends. */
function walkArray(text: Text, at: number, element: (start: number) => number): number {
  if (text.charCodeAt(at) !== 0x5b) throw new RawHitsError(`array expected at ${at}`);
  let i = skipSpace(text, at + 1);
  if (text.charCodeAt(i) === 0x5d) return i + 1;
  for (;;) {
    i = skipSpace(text, element(i));
    if (text.charCodeAt(i) === 0x5d) return i + 1;
    if (text.charCodeAt(i) !== 0x2c) throw new RawHitsError(`comma expected at ${i}`);
    i = skipSpace(text, i + 1);
  }
}

/**
 * What follows a row in Elasticsearch's compact output: the row's own `}`, `_source`'s `}`,
 * then the hit's sort (`{"_source":{"row":{…}},"sort":[…]}`). Within a JSON string a `"` is
 * always escaped, so `,"sort":[` is never inside one: it is always a key `sort` with an array.
 */
const ROW_TAIL = '}},"sort":[';
const HIT_SORT = '},"sort":[';

function occurrences(text: Text, pattern: string): number {
  let count = 0;
  for (let at = text.indexOf(pattern); at !== -1; at = text.indexOf(pattern, at + pattern.length)) count += 1;
  return count;
}

/**
 * The hits of a search response (`{…,"hits":{"total":{…},…,"hits":[{…,"_source":{"row":…},"sort":[…]},…]}}`:
 * whole, or as a `filter_path` leaves it, `{}` when nothing matched and nothing was counted).
 * Only the small `total` object is parsed.
 *
 * Rows are cut without walking them where that is sure: each object row ends just before the
 * first `}},"sort":[` after its start, unless a row itself holds `},"sort":[` (a nested key
 * `sort`). The cut page is kept only when the text holds exactly one `},"sort":[` per hit (so
 * no row holds one) and the walk of everything else ends exactly at the end of the text (a row
 * cut short would leave its brackets unbalanced there). Otherwise every byte is walked. A walk
 * spends most of its time in the rows, so cutting them saves most of it.
 */
export function rawHits(buf: Buffer): RawPage {
  const text = buf.toString('latin1');
  try {
    const page = walkPage(buf, text, true);
    if (occurrences(text, HIT_SORT) === page.hits.length) return page;
  } catch (error) {
    if (!(error instanceof RawHitsError)) throw error;
  }
  return walkPage(buf, text, false);
}

/** The bytes of a doc-values row: `fields` as `{"row":["<base64>"]}` (a base64 string holds no escapes). */
function docValuesRow(text: Text, at: number, found: (row: Buffer) => void): number {
  return walkObject(text, at, (field, from) => {
    if (field !== ROW) return endOfValue(text, from);
    return walkArray(text, from, (start) => {
      const end = endOfString(text, start);
      found(Buffer.from(text.slice(start + 1, end - 1), 'base64'));
      return end;
    });
  });
}

/** How a cut hit's `_source` starts: the row, an object, its only field. */
const SOURCE_HEAD = '{"row":{';

/**
 * One walk of the page; `cutRows`: each hit read as `{…,"_source":{"row":{…}},"sort":[…]}` (the
 * hit's own keys before `_source`, `_index`, `_id` and `_score` where no `filter_path` dropped
 * them, are walked), its row cut at ROW_TAIL rather than walked.
 */
export function walkPage(buf: Buffer, text: Text, cutRows: boolean): RawPage {
  const found: RawHit[] = [];
  const cutHit = (start: number): number => {
    let row: [number, number] | Buffer | undefined;
    let sort: [number, number] | undefined;
    const end = walkObject(text, start, (key, at) => {
      if (key === 'fields') return docValuesRow(text, at, (bytes) => (row = bytes));
      if (key === '_source') {
        if (!text.startsWith(SOURCE_HEAD, at)) throw new RawHitsError(`not a cut hit at ${at}`);
        const from = at + SOURCE_HEAD.length - 1;
        const tail = text.indexOf(ROW_TAIL, from);
        if (tail === -1) throw new RawHitsError('no row tail');
        row = [from, tail + 1];
        return tail + 2;
      }
      const to = endOfValue(text, at);
      if (key === 'sort') sort = [at, to];
      return to;
    });
    if (!row || !sort) throw new RawHitsError(`not a cut hit at ${start}`);
    found.push({ row: Buffer.isBuffer(row) ? row : buf.subarray(row[0], row[1]), sort: buf.subarray(sort[0], sort[1]) });
    return end;
  };
  const hit = (start: number): number => {
    let row: [number, number] | Buffer | undefined;
    let sort: [number, number] | undefined;
    const end = walkObject(text, start, (key, at) => {
      if (key === 'fields') return docValuesRow(text, at, (bytes) => (row = bytes));
      if (key === '_source') {
        return walkObject(text, at, (field, from) => {
          const to = endOfValue(text, from);
          if (field === 'row') row = [from, to];
          return to;
        });
      }
      const to = endOfValue(text, at);
      if (key === 'sort') sort = [at, to];
      return to;
    });
    if (!row) throw new RawHitsError('a hit without _source.row or fields.row');
    found.push({ row: Buffer.isBuffer(row) ? row : buf.subarray(row[0], row[1]), sort: sort && buf.subarray(sort[0], sort[1]) });
    return end;
  };
  let total: TotalHits | undefined;
  const inHits = (key: string, at: number) => {
    if (key === 'hits') return walkArray(text, at, cutRows ? cutHit : hit);
    const end = endOfValue(text, at);
    if (key === 'total') total = JSON.parse(text.slice(at, end)) as TotalHits;
    return end;
  };
  const end = walkObject(text, skipSpace(text, 0), (key, at) => (key === 'hits' ? walkObject(text, at, inHits) : endOfValue(text, at)));
  if (skipSpace(text, end) !== text.length) throw new RawHitsError(`unexpected bytes after the response at ${end}`);
  return total === undefined ? { hits: found } : { hits: found, total };
}
