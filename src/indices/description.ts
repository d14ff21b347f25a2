/**
 * The shape of an index description: the one place that says, for each index, which bundle
 * file feeds it, its mapping, how a row becomes a document (id and indexed fields), and the
 * order its lists are read in. The loader writes with it; the gateway reads with it.
 *
 * Every document keeps the exported row verbatim under `row`, and carries the indexed fields
 * beside it. Where `row` is kept says its mapping:
 * - an object Elasticsearch stores but does not index, the only field of the stored `_source`
 *   (mapping `_source.includes`): reads return it without source filtering, which measurably
 *   costs Elasticsearch CPU on every hit;
 * - the row's bytes as binary doc values, with no `_source` at all (`rowsInDocValues`): a hit
 *   then costs Elasticsearch no stored fields to read, most of what a page cost it (docs/design.md,
 *   *Where `row` is kept*), for the indices whose pages are read most.
 * Rows never fail a load because a field changed type, and unknown fields survive without
 * being mapped.
 */
import { createHash } from 'node:crypto';
import type { CycleStart } from '../config.ts';

/** A row as parsed from a JSONL line. */
export type Row = Record<string, unknown>;

/** What the documents of one load may read of the generation being loaded (see `dependsOn`). */
export interface LoadContext {
  cycleStarts: readonly CycleStart[];
  /** Entity rows of the generation being loaded, by id (entities load first); missing ids are left out. */
  lookupEntities(ids: string[]): Promise<ReadonlyMap<string, Row>>;
  /** Of these killmail ids, those whose killer is an enemy through a sourced `killer` relation of the generation. */
  lookupNpcKills(ids: string[]): Promise<ReadonlySet<string>>;
  /** The tribes these characters belong to (`belongs_to` relations of the generation), by character id. */
  lookupTribes(characterIds: string[]): Promise<ReadonlyMap<string, readonly string[]>>;
}

/** An index mapping file: settings and mappings as sent to `indices.create`. */
export interface MappingFile {
  settings: Record<string, unknown>;
  mappings: { dynamic: 'strict'; _source?: { includes: string[] } | { enabled: false }; properties: Record<string, unknown> };
}

/** The doc-values field a row lives in where its mapping keeps it there (`rowsInDocValues`); one spelling for loader and gateway. */
export const ROW = 'row';

/** Whether an index keeps its rows as binary doc values (read with `docvalue_fields`, base64) rather than in `_source`. */
export function rowsInDocValues(mapping: MappingFile): boolean {
  return (mapping.mappings.properties[ROW] as { type?: string } | undefined)?.type === 'binary';
}

/** A hit's (or a suggestion option's) row, wherever its index keeps it: `_source.row`, or the base64 doc value `fields.row`. */
export function rowOfHit(hit: { _source?: unknown; fields?: Record<string, unknown> }): Row | undefined {
  const value = (hit.fields?.[ROW] as unknown[] | undefined)?.[0];
  if (typeof value === 'string') return JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as Row;
  return (hit._source as { row?: Row } | undefined)?.row;
}

/** The exported line a document keeps as the stored field `original` (see `keepsLine`), when the hit asked for it. */
export function originalOfHit(hit: { fields?: Record<string, unknown> }): Row | undefined {
  const stored = (hit.fields?.original as string[] | undefined)?.[0];
  return stored === undefined ? undefined : (JSON.parse(Buffer.from(stored, 'base64').toString('utf8')) as Row);
}

/**
 * The search body that reads the rows of `ids` (rows kept as doc values have no realtime get): by
 * `_id`, every match in one page, no count; the row from doc values where `rowsInDocValues`, with
 * `storedFields` beside (none unless asked), else from `_source`. Read a hit with `rowOfHit`.
 */
export function rowsOfIds(ids: readonly string[], rowsInDocValues: boolean, storedFields: string[] | '_none_' = '_none_') {
  return {
    size: ids.length,
    track_total_hits: false,
    query: { ids: { values: ids.map(documentId) } },
    ...(rowsInDocValues ? { stored_fields: storedFields, docvalue_fields: [ROW] } : {}),
  };
}

/** Sort and doc values of `date_nanos` fields come back as text in this format: exact, unlike epoch nanos in a JS number. */
export const NANOS_FORMAT = 'strict_date_optional_time_nanos';

/**
 * How a derived index gets its rows: no bundle file, a scan of another index of the generation
 * once that one is loaded (loader/derive-index.ts), in `sort` order, reading the doc values of
 * `fields` (and the row, where that index keeps it in doc values), a page of hits at a time.
 */
export interface Derivation {
  readonly from: string;
  readonly query: Record<string, unknown>;
  readonly sort: readonly string[];
  readonly fields: readonly (string | { field: string; format: string })[];
  rows(pages: AsyncIterable<readonly { fields?: Record<string, unknown[]> }[]>, context: LoadContext): AsyncIterable<Row>;
}

/** One sort clause; `format` makes `date_nanos` sort values strings (exact in JSON). */
export interface SortField<Doc> {
  field: (keyof Doc & string) | '_score';
  order: 'asc' | 'desc';
}

/** A row that cannot become a document; the loader adds `file:line`. */
export class RowError extends Error {
  override name = 'RowError';
}

export interface IndexDescription<Doc extends { id: string } = { id: string } & Record<string, unknown>> {
  /** Short name: alias suffix, index name part, metric label. */
  readonly name: string;
  /** Bundle file stems that feed it (`entities` → entities.jsonl or entities.jsonl.gz); the first is canonical. */
  readonly files: readonly string[];
  readonly mapping: MappingFile;
  /** Fields the registry verifier requires on every row (missing, null, blank or empty fails). */
  readonly requiredFields: readonly string[];
  /** Order of this index's lists; the last field is unique, so keyset paging is total. */
  readonly sort: readonly SortField<Doc>[];
  /** Builds the document of a row; throws RowError when the row cannot be indexed. */
  toDocument(row: Row, context: LoadContext): Doc;
  /**
   * Other indices whose files shape this one's documents (through `prepare`): the index is
   * reused or updated only while those files are unchanged too, and loads after them.
   */
  readonly dependsOn?: readonly string[];
  /** Rows that leave it, or change, are recorded for mirrors and 410s (src/indices/changes.ts). */
  readonly tombstones?: boolean;
  /** Set for an index derived from another of the generation instead of a file (`files` is empty): battle_kills. */
  readonly derive?: Derivation;
  /** Completes a batch of documents with what other files of the generation hold (killmail actors). */
  prepare?(docs: Doc[], context: LoadContext): Promise<void>;
  /**
   * Documents carry `indexedAt` (FIRST_SEEN): the instant of the load that first held the row.
   * A load keeps the instant of every id the previous generation held and gives new ids its own.
   */
  readonly firstSeen?: boolean;
  /**
   * Set when `row` is a view derived at load time rather than the exported row: the exported
   * line is then kept too, as the stored (not indexed, not in `_source`) field `original`.
   */
  readonly keepsLine?: boolean;
}

/**
 * Fields the loader adds to every document beside the description's own: the hash of the
 * exported line (how an updated index tells unchanged rows, loader/write-index.ts) and, where
 * `firstSeen`, the instant the row first became visible. One spelling, shared with the gateway.
 */
export const ROW_HASH = 'rowHash';
export const FIRST_SEEN = 'indexedAt';

/** The end of a bulk source line that adds nothing after `row`: shared, never written to. */
const CLOSE = Buffer.from('}\n');

/**
 * A document as the bytes of its bulk action and source lines: the action line and the indexed
 * `fields` serialized, in one buffer; then `row` — the exported line's own bytes when `rowIsLine`
 * (it parsed, so it is JSON: the row is never serialized again, nor even decoded and encoded) —
 * else the row serialized — then, for descriptions that keep it, the line as `original`; and the
 * closing newline. Three buffers a document, one of them a view of the line read: on a 1.5 M-row
 * load each allocation saved is garbage the loader does not collect beside Elasticsearch.
 * Where rows live in doc values (`rowAsBase64`), `row` is their bytes in base64, one buffer.
 */
export function toBulkLines(action: string, fields: Record<string, unknown>, row: unknown, line: Buffer, rowIsLine: boolean, keepLine = false, rowAsBase64 = false): Buffer[] {
  const head = JSON.stringify(fields);
  const open = `${action}${head.length > 2 ? `${head.slice(0, -1)},` : '{'}"row":`;
  const original = keepLine ? `,"original":"${line.toString('base64')}"` : '';
  if (rowAsBase64) {
    // Binary doc values take base64 (no character of it needs escaping in JSON).
    const bytes = rowIsLine ? line : Buffer.from(JSON.stringify(row));
    return [Buffer.from(`${open}"${bytes.toString('base64')}"${original}}\n`)];
  }
  if (!rowIsLine) return [Buffer.from(`${open}${JSON.stringify(row)}${original}}\n`)];
  return [Buffer.from(open), line, original ? Buffer.from(`${original}}\n`) : CLOSE];
}

/** Elasticsearch refuses `_id`s over 512 bytes; longer ids are hashed for `_id` only (the `id` field keeps them). */
const MAX_ID_BYTES = 512;

export function documentId(id: string): string {
  return Buffer.byteLength(id) <= MAX_ID_BYTES ? id : `sha256:${createHash('sha256').update(id).digest('hex')}`;
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** A nested object of a row (an actor, `raw`, a source), or undefined for anything else. */
export function object(value: unknown): Row | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Row) : undefined;
}

export function required(row: Row, field: string): string {
  const value = str(row[field]);
  if (value === undefined) throw new RowError(`missing required field "${field}"`);
  return value;
}

/** Sort keys are kept short: a name of thousands of characters still sorts by its start. */
export function sortLabel(...candidates: unknown[]): string {
  for (const candidate of candidates) {
    const value = str(candidate);
    if (value !== undefined) return value.slice(0, 256);
  }
  return '';
}

/**
 * Whole values and their words, for exact-word matching: ids split at `:`, `-`, `/` and the
 * like, names at spaces and punctuation. A search for `2112456789` finds
 * `character:stillness:2112456789`, and `vesna` finds `Vesna Korr`.
 */
export function tokensOf(...values: unknown[]): string[] {
  // A row has a handful of tokens: scanning an array beats hashing into a Set (the loader runs
  // this for every row). Past a few dozen (a long name), a Set keeps it from growing quadratic.
  const tokens: string[] = [];
  let seen: Set<string> | undefined;
  const add = (token: string) => {
    if (seen) {
      if (seen.has(token)) return;
      seen.add(token);
    } else {
      if (tokens.includes(token)) return;
      if (tokens.length === 32) seen = new Set(tokens).add(token);
    }
    tokens.push(token);
  };
  for (const candidate of values) {
    const value = str(candidate);
    if (value === undefined) continue;
    add(value);
    for (const part of words(value)) add(part);
  }
  return tokens.map((t) => t.slice(0, 512));
}

const NON_WORD = /[^\p{L}\p{N}]+/u;
/** ASCII's letters and digits: in ASCII, `\p{L}` and `\p{N}` are exactly these. */
const ASCII_WORD = new Uint8Array(128).map((_, c) => Number(/[A-Za-z0-9]/.test(String.fromCharCode(c))));

/**
 * The words of a text: runs of letters and digits. Index tokens and `q` filters split alike.
 * ASCII text (ids, digests, most names) is scanned by character code; the Unicode regex split
 * was a tenth of the loader's CPU on events. Any other character sends the text to the regex.
 */
export function words(text: string): string[] {
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 128) return text.split(NON_WORD).filter(Boolean);
    if (ASCII_WORD[code] === 1) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      out.push(text.slice(start, i));
      start = -1;
    }
  }
  if (start >= 0) out.push(text.slice(start));
  return out;
}

/** Registry placeholder labels (`Character 2112456789`, `Tribe 98000001`, `Gate 0x5e1f`): no real name is known yet. */
export function isPlaceholder(label: string): boolean {
  return /^[A-Za-z][A-Za-z ]* (?:0x[0-9a-f]+|\d+)$/i.test(label);
}
