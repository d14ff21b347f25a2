/**
 * One JSONL file into one index, the pipeline every way of writing shares (write-index.ts): a
 * source of bulk items read from the file (row-items.ts; on this thread: read-on-thread.ts, on
 * the parse pool: read-on-pool.ts, merged against a line index: update-over-line-index.ts) →
 * `_bulk` (bulk-sender.ts) → the file's integrity and Elasticsearch's acknowledgements.
 *
 * Fails fast: the first bad line (invalid UTF-8 or JSON, not an object, a required field
 * missing, a row the index description cannot use) or the first document Elasticsearch rejects
 * stops the file with `file:line`. After the last line it checks sha256, size and row count of
 * the uncompressed bytes against the manifest, and that Elasticsearch acknowledged every row.
 */
import type { Client } from '@elastic/elasticsearch';
import type { IndexDescription, LoadContext } from '../src/indices/description.ts';
import type { BundleFile } from './bundle.ts';
import { LoadError, RebuildInstead } from './errors.ts';
import type { LineIndexWriter } from './line-index.ts';
import type { PreviousIndex } from './previous-index.ts';
import type { FileProgress } from './progress.ts';
import { type ChunkStream, type Integrity, readChunks } from './read-lines.ts';
import { sendBulk } from './bulk-sender.ts';
import { type Pending, RowItems } from './row-items.ts';
import type { Semaphore } from './semaphore.ts';

export { lineHash } from './row-document.ts';

/**
 * Bytes per bulk request: on a 1.5 M-row load, 4 MB bodies gave the same rows/s as 1 MB, but
 * kept megabytes of bulk text alive long enough to reach V8's old generation (peak RSS 523 MB
 * against 265 MB, with the CLI's 8 MB semi-spaces).
 */
export const DEFAULT_FLUSH_BYTES = 1_000_000;

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
  /** Lines were parsed on the parse pool's workers (else on the loader's thread). */
  pooled: boolean;
}

/** What every way of writing a file into an index is given. */
export interface FileJob {
  client: Client;
  file: BundleFile;
  index: string;
  description: IndexDescription<any>;
  context: LoadContext;
  progress: FileProgress;
  /** The live index of the same name: first-seen instants, and the documents an update keeps. */
  previous?: PreviousIndex;
  /** Where the new index's line index is written as the file is read (line-index.ts): what the next export's update compares its file with. */
  lineIndex?: LineIndexWriter;
  /** `indexedAt` of rows no previous generation held. */
  indexedAt: string;
  /**
   * This load's number (one more than any kept generation's): each document is written with the
   * external version `sequence · 2³² + line`, so the last line of an id wins whatever order the
   * concurrent bulk requests land in, and any row of this load replaces one of an earlier load.
   */
  sequence: number;
  /**
   * Bytes per bulk request (DEFAULT_FLUSH_BYTES) and requests in flight of this
   * file: by default the size of the shared budget (`slots`), else 3.
   */
  flushBytes?: number;
  concurrency?: number;
  /** The load's budget of requests in flight, shared with the files loading beside this one (loader/semaphore.ts). */
  slots?: Semaphore;
  /** Stops reading and sending (the load then fails with the AbortError). */
  signal?: AbortSignal;
}

/** A way's reading of the file: its bulk items in file order, and what it counted once they are drained. */
export interface ItemSource {
  items: AsyncIterable<Pending>;
  /** Lines read: rows (blank lines excluded) and blank lines. */
  counts(): { rows: number; blankLines: number };
  /** The lines were parsed on the parse pool. */
  pooled?: boolean;
}

export function checkIntegrity(file: BundleFile, actual: Integrity): void {
  for (const key of ['sha256', 'sizeBytes', 'rowCount'] as const) {
    if (actual[key] !== file[key]) {
      throw new LoadError(`${key} mismatch: manifest says ${file[key]}, the file has ${actual[key]}`, { file: file.path });
    }
  }
}

/** The faults a source stops with that stay as they are; any other becomes a LoadError of the file. */
function kept(error: unknown): boolean {
  return error instanceof LoadError || error instanceof RebuildInstead || (error as Error).name === 'AbortError';
}

/**
 * A source's items until its first fault, which is held for after the bulk has sent what came
 * before: the bulk then ends as a file that ended would, and reports what Elasticsearch refused.
 */
async function* untilFault(items: AsyncIterable<Pending>, file: BundleFile, fault: { error?: Error }): AsyncGenerator<Pending> {
  try {
    yield* items;
  } catch (error) {
    fault.error = kept(error) ? (error as Error) : new LoadError((error as Error).message, { file: file.path });
  }
}

/** Reads the file through the source a way makes of it, sends its items, and checks what came of them. */
export async function loadFile(job: FileJob, source: (rows: RowItems, stream: ChunkStream) => ItemSource): Promise<FileLoadResult> {
  const { client, file, index, signal, flushBytes = DEFAULT_FLUSH_BYTES, slots, concurrency = slots?.size ?? 3 } = job;
  const started = performance.now();
  const stream = readChunks(file, { signal });
  const rows = new RowItems(job);
  const read = source(rows, stream);
  const fault: { error?: Error } = {};
  const sent = await sendBulk(client, untilFault(read.items, file, fault), { index, flushBytes, concurrency, slots, signal });
  if (fault.error instanceof RebuildInstead) throw fault.error;
  if (sent.refused) {
    const { reason, item, transient } = sent.refused;
    // A refusal of the cluster's (a node behind the master, a shard moving) fails the load, not the bundle: the next check tries again.
    throw new LoadError(transient ? `Elasticsearch could not take the row (${reason})` : `Elasticsearch refused the row (${reason})`, { file: file.path, line: item.line, transient });
  }
  if (fault.error) throw fault.error;
  checkIntegrity(file, stream.integrity());
  if (sent.successful + sent.superseded !== rows.written) {
    throw new LoadError(`Elasticsearch acknowledged ${sent.successful} of ${rows.written} rows`, { file: file.path });
  }
  const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  return { file: file.path, index, ...read.counts(), written: rows.written, seconds: (performance.now() - started) / 1000, peakRssMb, pooled: read.pooled === true };
}
