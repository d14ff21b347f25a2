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
 */
import type { Client } from '@elastic/elasticsearch';
import { type IndexDescription, type LoadContext, RowError, documentId, toBulkSource } from '../src/indices/description.ts';
import type { BundleFile } from './bundle.ts';
import { LoadError } from './errors.ts';
import type { FileProgress } from './progress.ts';
import { type Integrity, readLines } from './read-lines.ts';

export interface FileLoadResult {
  file: string;
  index: string;
  /** Rows indexed (blank lines excluded). */
  rows: number;
  /** Distinct ids the index holds once refreshed (filled in by the caller). */
  documents?: number;
  blankLines: number;
  seconds: number;
  /** Highest cycle seen on a document. */
  maxCycle: number;
  /** Peak RSS of the process once this file was in: shows memory stays flat as files grow. */
  peakRssMb: number;
}

export interface LoadFileOptions {
  client: Client;
  file: BundleFile;
  index: string;
  description: IndexDescription<any>;
  context: LoadContext;
  progress: FileProgress;
  /**
   * Bytes per bulk request and requests in flight (the helper's own knobs). 1 MB × 3: on a
   * 1.5 M-row load, 4 MB bodies gave the same rows/s, but kept megabytes of bulk text alive long
   * enough to reach V8's old generation: peak RSS 523 MB against 265 MB (with the CLI's 8 MB
   * semi-spaces).
   */
  flushBytes?: number;
  concurrency?: number;
  /** Stops reading the file (the load then fails with the AbortError). */
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
  const { client, file, index, description, context, progress, flushBytes = 1_000_000, concurrency = 3 } = options;
  const started = performance.now();
  const stream = readLines(file, { signal: options.signal });
  const shapeChecked = description.requiredFields.length > 0;
  /** The first fault: a LoadError naming `file:line`, or the caller's abort as it was thrown. */
  let failure: Error | undefined;
  let rows = 0;
  let blankLines = 0;
  let maxCycle = 0;

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
  function toPending(record: unknown, doc: { id: string; cycle?: number; row: unknown }, text: string, line: number): Pending {
    description.observe?.(doc, context);
    if (typeof doc.cycle === 'number' && doc.cycle > maxCycle) maxCycle = doc.cycle;
    rows += 1;
    progress.increment();
    return { id: doc.id, source: toBulkSource(doc, text, doc.row === record, description.keepsLine), line };
  }

  async function* documents(): AsyncGenerator<Pending> {
    try {
      for await (const batch of stream.batches) {
        if (failure) return;
        // Each row becomes its bulk text at once, so parsed rows die young instead of surviving
        // the batch's awaits into the old generation (that alone took the loader's RSS up by ~100 MB).
        const items: Pending[] = [];
        const waiting: (ReturnType<typeof toDocument> & { text: string; line: number })[] = [];
        for (const { text, line } of batch) {
          if (text.trim() === '') {
            // The registry's verifier refuses blank lines only in the files it shape-checks.
            if (shapeChecked) throw new LoadError('blank line', { file: file.path, line });
            blankLines += 1;
            continue;
          }
          const { record, doc } = toDocument(text, line);
          if (description.prepare) waiting.push({ record, doc, text, line });
          else items.push(toPending(record, doc, text, line));
        }
        // Documents that need other rows of this generation (killmail actors) get them per batch.
        if (description.prepare && waiting.length > 0) {
          await description.prepare(waiting.map((w) => w.doc), context);
          for (const { record, doc, text, line } of waiting) items.push(toPending(record, doc, text, line));
        }
        yield* items;
      }
    } catch (error) {
      const kept = error instanceof LoadError || (error as Error).name === 'AbortError';
      failure ??= kept ? (error as Error) : new LoadError((error as Error).message, { file: file.path });
    }
  }

  /** The first line whose document has this id (a refused row is rare: the file is read again to name it). */
  async function lineOf(id: string): Promise<number | undefined> {
    for await (const batch of readLines(file, { signal: options.signal }).batches) {
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
    onDocument: (doc) => [{ index: { _index: index, _id: documentId(doc.id) } }, doc.source as never],
    onDrop: ({ document, error, status }) => {
      // The helper hands back the source it sent, parsed: its `id` names the row.
      dropped ??= { id: String((document as unknown as { id?: unknown })?.id), reason: error ? `${error.type}: ${error.reason ?? ''}` : `status ${status}` };
      bulk.abort();
    },
  });
  let dropped: { id: string; reason: string } | undefined;
  const stats = await bulk;
  if (dropped) {
    const line = await lineOf(dropped.id);
    throw new LoadError(`Elasticsearch refused the row (${dropped.reason})`, { file: file.path, line });
  }
  if (failure) throw failure;
  checkIntegrity(file, stream.integrity());
  if (stats.successful !== rows || stats.failed !== 0) {
    throw new LoadError(`Elasticsearch acknowledged ${stats.successful} of ${rows} rows`, { file: file.path });
  }
  const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  return { file: file.path, index, rows, blankLines, seconds: (performance.now() - started) / 1000, maxCycle, peakRssMb };
}
