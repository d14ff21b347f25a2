/**
 * One JSONL file into one index: lines → JSON rows → documents → Elastic's bulk helper.
 *
 * Fails fast: the first bad line (invalid UTF-8 or JSON, not an object, a required field
 * missing, a row the index description cannot use) or the first document Elasticsearch rejects
 * stops the file with `file:line`. After the last line it checks sha256, size and row count of
 * the uncompressed bytes against the manifest, and that Elasticsearch acknowledged every row.
 *
 * Each bulk line is assembled as text: the document's indexed fields serialized, then the
 * exported line itself as `row`, byte for byte (it parsed, so it is JSON). The row is never
 * serialized again, and no per-document callback makes the helper parse what it sent: on a
 * 1.5 M-row load those two round trips were 10 of the loader's 45 CPU seconds.
 *
 * Every document carries the hash of its line (ROW_HASH). With `previous` (the live index of
 * the same name): documents of `firstSeen` indices keep the instant the previous index holds
 * for their id, new ids get `indexedAt`; and with `update` the index is a clone of `previous`,
 * so lines whose hash it already holds are only counted — not parsed, not sent — and the ids of
 * the file are collected for the sweep that follows (loader/update-index.ts).
 */
import { hash } from 'node:crypto';
import type { Client } from '@elastic/elasticsearch';
import { FIRST_SEEN, type IndexDescription, type LoadContext, ROW_HASH, RowError, documentId, toBulkSource } from '../src/indices/description.ts';
import type { BundleFile } from './bundle.ts';
import { LoadError } from './errors.ts';
import { IdSet } from './id-set.ts';
import type { PreviousIndex } from './previous-index.ts';
import type { FileProgress } from './progress.ts';
import { type Integrity, readLines } from './read-lines.ts';

/** The hash of an exported line that documents carry (ROW_HASH): 66 bits of its sha1, as text. */
export function lineHash(text: string): string {
  return hash('sha1', text, 'base64url').slice(0, 11);
}

export interface FileLoadResult {
  file: string;
  index: string;
  /** Rows indexed (blank lines excluded). */
  rows: number;
  /** Distinct ids the index holds once refreshed (filled in by the caller). */
  documents?: number;
  blankLines: number;
  seconds: number;
  /** Peak RSS of the process once this file was in: shows memory stays flat as files grow. */
  peakRssMb: number;
  /** Rows sent to Elasticsearch (all of them, but for an update: only new and changed lines). */
  written: number;
  /** An update: the file's ids, for the sweep of rows that left. */
  ids?: IdSet;
}

export interface LoadFileOptions {
  client: Client;
  file: BundleFile;
  index: string;
  description: IndexDescription<any>;
  context: LoadContext;
  progress: FileProgress;
  /** The live index of the same name: first-seen instants, and the documents an update keeps. */
  previous?: PreviousIndex;
  /** The index is a clone of `previous`: send only the lines it does not hold. */
  update?: boolean;
  /** `indexedAt` of rows no previous generation held. */
  indexedAt: string;
  /**
   * This load's number (one more than any kept generation's): each document is written with the
   * external version `sequence · 2³² + line`, so the last line of an id wins whatever order the
   * concurrent bulk requests land in, and any row of this load replaces one of an earlier load.
   */
  sequence: number;
  /**
   * Bytes per bulk request and requests in flight (the helper's own knobs). 1 MB × 3: on a
   * 1.5 M-row load, 4 MB bodies gave the same rows/s, but kept megabytes of bulk text alive long
   * enough to reach V8's old generation: peak RSS 523 MB against 265 MB (with the CLI's 8 MB
   * semi-spaces).
   */
  flushBytes?: number;
  concurrency?: number;
  /** Stops reading and sending (the load then fails with the AbortError). */
  signal?: AbortSignal;
}

/** What the bulk helper is fed: the action's id, the document as JSON text, and where it came from. */
interface Pending {
  id: string;
  source: string;
  line: number;
}

function isMissing(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '') || (Array.isArray(value) && value.length === 0);
}

export function checkIntegrity(file: BundleFile, actual: Integrity): void {
  for (const key of ['sha256', 'sizeBytes', 'rowCount'] as const) {
    if (actual[key] !== file[key]) {
      throw new LoadError(`${key} mismatch: manifest says ${file[key]}, the file has ${actual[key]}`, { file: file.path });
    }
  }
}

export async function loadJsonlFile(options: LoadFileOptions): Promise<FileLoadResult> {
  const { client, file, index, description, context, progress, previous, update = false, indexedAt, sequence, signal, flushBytes = 1_000_000, concurrency = 3 } = options;
  const started = performance.now();
  const stream = readLines(file, { signal });
  const shapeChecked = description.requiredFields.length > 0;
  const ids = update ? new IdSet(file.rowCount) : undefined;
  const versionBase = sequence * 2 ** 32;
  const carries = description.firstSeen === true;
  /** The first fault: a LoadError naming `file:line`, or the caller's abort as it was thrown. */
  let failure: Error | undefined;
  let rows = 0;
  let written = 0;
  let blankLines = 0;

  /** A line → its row and document, or a LoadError naming `file:line`. */
  function toDocument(text: string, line: number): { record: Record<string, unknown>; doc: { id: string; cycle?: number; row: unknown } } {
    let row: unknown;
    try {
      row = JSON.parse(text);
    } catch (error) {
      throw new LoadError(`invalid JSON (${(error as Error).message})`, { file: file.path, line });
    }
    if (row === null || typeof row !== 'object' || Array.isArray(row)) {
      throw new LoadError('a row must be a JSON object', { file: file.path, line });
    }
    const record = row as Record<string, unknown>;
    const missing = description.requiredFields.find((field) => isMissing(record[field]));
    if (missing !== undefined) throw new LoadError(`missing required field "${missing}"`, { file: file.path, line });
    try {
      return { record, doc: description.toDocument(record, context) };
    } catch (error) {
      if (error instanceof RowError) throw new LoadError(error.message, { file: file.path, line });
      throw error;
    }
  }

  /** The bulk item of a finished document. The exported line is its row, unless the description put a view there. */
  function toPending(record: unknown, doc: { id: string; cycle?: number; row: unknown }, text: string, line: number, rowHash: string): Pending {
    written += 1;
    progress.increment();
    const source = toBulkSource({ ...doc, [ROW_HASH]: rowHash }, text, doc.row === record, description.keepsLine);
    return { id: doc.id, source, line };
  }

  /** Puts each document's first-seen instant in front of its other fields: the previous index's, else this load's. */
  async function stamp(items: Pending[]): Promise<Pending[]> {
    const seen = previous ? await previous.firstSeen(items.map((item) => item.id)) : new Map<string, string>();
    for (const item of items) item.source = `{"${FIRST_SEEN}":"${seen.get(item.id) ?? indexedAt}",${item.source.slice(1)}`;
    return items;
  }

  async function* documents(): AsyncGenerator<Pending> {
    try {
      for await (const batch of stream.batches) {
        if (failure) return;
        signal?.throwIfAborted();
        let lines: { text: string; line: number; hash: string }[] = [];
        for (const { text, line } of batch) {
          if (text.trim() === '') {
            // The registry's verifier refuses blank lines only in the files it shape-checks.
            if (shapeChecked) throw new LoadError('blank line', { file: file.path, line });
            blankLines += 1;
            continue;
          }
          lines.push({ text, line, hash: lineHash(text) });
        }
        rows += lines.length;
        // An update: lines the clone already holds, byte for byte, are neither parsed nor sent —
        // unless their id came before in the file (then the last line must win: it is sent).
        const kept = update && previous && lines.length > 0 ? await previous.unchanged(lines.map((l) => l.hash)) : undefined;
        // Each row becomes its bulk text at once, so parsed rows die young instead of surviving
        // the batch's awaits into the old generation (that alone took the loader's RSS up by ~100 MB).
        let items: Pending[] = [];
        const waiting: (ReturnType<typeof toDocument> & { text: string; line: number; hash: string })[] = [];
        for (const { text, line, hash } of lines) {
          const known = kept?.get(hash);
          if (known !== undefined && !ids!.add(known)) {
            progress.increment();
            continue;
          }
          const built = toDocument(text, line);
          if (ids && known === undefined) ids.add(built.doc.id);
          if (description.prepare) waiting.push({ ...built, text, line, hash });
          else items.push(toPending(built.record, built.doc, text, line, hash));
        }
        // Documents that need other rows of this generation (killmail actors) get them per batch.
        if (description.prepare && waiting.length > 0) {
          await description.prepare(waiting.map((w) => w.doc), context);
          for (const { record, doc, text, line, hash } of waiting) items.push(toPending(record, doc, text, line, hash));
        }
        if (carries && items.length > 0) items = await stamp(items);
        yield* items;
      }
    } catch (error) {
      const kept = error instanceof LoadError || (error as Error).name === 'AbortError';
      failure ??= kept ? (error as Error) : new LoadError((error as Error).message, { file: file.path });
    }
  }

  /** The first line whose document has this id (a refused row is rare: the file is read again to name it). */
  async function lineOf(id: string): Promise<number | undefined> {
    for await (const batch of readLines(file, { signal }).batches) {
      for (const { text, line } of batch) {
        try {
          if (text.trim() !== '' && toDocument(text, line).doc.id === id) return line;
        } catch {
          // Lines after the refused one may be bad too; they were never sent.
        }
      }
    }
    return undefined;
  }

  const bulk = client.helpers.bulk<Pending>({
    datasource: documents(),
    flushBytes,
    concurrency,
    // Only what the helper reads of each item: a response per document is otherwise ~200 bytes to parse.
    filter_path: 'errors,items.*.status,items.*.error',
    onDocument: (doc) => [{ index: { _index: index, _id: documentId(doc.id), version: versionBase + doc.line, version_type: 'external' } }, doc.source as never],
    onDrop: ({ document, error, status }) => {
      // An earlier line of a repeated id that landed after the last one: the last one stays.
      if (status === 409) {
        superseded += 1;
        return;
      }
      // The helper hands back the source it sent, parsed: its `id` names the row.
      dropped ??= { id: String((document as unknown as { id?: unknown })?.id), reason: error ? `${error.type}: ${error.reason ?? ''}` : `status ${status}` };
      bulk.abort();
    },
  });
  let dropped: { id: string; reason: string } | undefined;
  let superseded = 0;
  const abort = () => bulk.abort();
  signal?.addEventListener('abort', abort, { once: true });
  const stats = await bulk.finally(() => signal?.removeEventListener('abort', abort));
  signal?.throwIfAborted();
  if (dropped) {
    const line = await lineOf(dropped.id);
    throw new LoadError(`Elasticsearch refused the row (${dropped.reason})`, { file: file.path, line });
  }
  if (failure) throw failure;
  checkIntegrity(file, stream.integrity());
  if (stats.successful + superseded !== written || stats.failed !== superseded) {
    throw new LoadError(`Elasticsearch acknowledged ${stats.successful} of ${written} rows`, { file: file.path });
  }
  const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  return { file: file.path, index, rows, written, ids, blankLines, seconds: (performance.now() - started) / 1000, peakRssMb };
}
