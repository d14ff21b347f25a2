/**
 * One JSONL file into one index: lines → JSON rows → documents → `_bulk` (bulk-sender.ts).
 *
 * Fails fast: the first bad line (invalid UTF-8 or JSON, not an object, a required field
 * missing, a row the index description cannot use) or the first document Elasticsearch rejects
 * stops the file with `file:line`. After the last line it checks sha256, size and row count of
 * the uncompressed bytes against the manifest, and that Elasticsearch acknowledged every row.
 *
 * Each bulk line is assembled as bytes: the document's indexed fields serialized, then the
 * exported line's own bytes as `row` (it parsed, so it is JSON): the row is never serialized,
 * nor even encoded, again. Batches are read one ahead, so their parsing and lookups overlap the
 * requests of the batch before.
 *
 * Every document carries the hash of its line (ROW_HASH). With `previous` (the live index of
 * the same name): documents of `firstSeen` indices keep the instant the previous index holds
 * for their id, new ids get `indexedAt`; and with `update` the index is a clone of `previous`,
 * so lines it already holds are only counted — not parsed, not sent. Which lines those are says
 * the live index's line index (`against`: a merge in file order, line-match.ts), or, without
 * one, Elasticsearch, asked for every line's hash (the ids of the file are then collected for
 * the sweep that follows, loader/update-index.ts).
 *
 * Every way writes the new index's line index (`lineIndex`, line-index.ts) as the file is read,
 * for the next export's update.
 *
 * With a parse pool (parse-pool.ts), a build hands chunks of whole lines to worker threads that
 * do the per-row work (split, UTF-8, parse, document, hash, bulk bytes: row-document.ts, the same
 * code as here); this thread reads, hashes and counts the file in order, and sends the workers'
 * blocks in file order. Updates, and descriptions that read other indices per batch (`prepare`),
 * stay on this thread: their per-line lookups decide what is parsed at all.
 */
import type { Client } from '@elastic/elasticsearch';
import type { IndexDescription, LoadContext } from '../src/indices/description.ts';
import type { BundleFile } from './bundle.ts';
import { LoadError, RebuildInstead } from './errors.ts';
import { IdSet } from './id-set.ts';
import { BlockCutter, type LineIndexHeader, type LineIndexWriter, entryOf, lineDigest, rowHashText } from './line-index.ts';
import { LineMatcher, type MatchCounts, type MatchEnd } from './line-match.ts';
import { updateStillPays } from './plan.ts';
import type { ParsePool, PooledBlock } from './parse-pool.ts';
import type { PreviousIndex } from './previous-index.ts';
import type { FileProgress } from './progress.ts';
import { type Integrity, type LineChunk, type RowLine, blankRow, readChunks, rowLinesOf } from './read-lines.ts';
import { type BulkItem, sendBulk } from './bulk-sender.ts';
import { type BuiltRow, bulkLines, parseRow } from './row-document.ts';
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
  /** An update: the file's ids, for the sweep of rows that left. */
  ids?: IdSet;
  /** Lines were parsed on the parse pool's workers (else on the loader's thread). */
  pooled: boolean;
  /** An update over a line index: what the merge counted and found (the rows that left, the documents to hold). */
  match?: MatchCounts & MatchEnd;
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
  /** An update: the line index of `previous` (checked, line-index.ts `openLineIndex`) that says which lines it holds. */
  against?: { file: string; header: LineIndexHeader };
  /** Where the new index's line index is written as the file is read. */
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
  /**
   * Worker threads that parse the file's lines into bulk bytes (parse-pool.ts): used for a
   * build, when the description reads no other index (`prepare`); an update stays on this thread.
   */
  pool?: ParsePool;
}

/** What is sent: the action and source lines as bytes (bulk-sender.ts), and where they came from (the first line of a block). */
interface Pending extends BulkItem {
  line: number;
}

/** Chunks of a file on the parse pool or waiting for it, at most: keeps the workers busy, and bounds the bytes held (a megabyte read, about as much built, each). */
const MAX_CHUNKS_AHEAD = 8;
/** The digest a blank line stands with: it has no entry, and nothing looks it up. */
const NO_DIGEST = Buffer.alloc(0);

/** A worker's block of documents as one bulk item; each document can still stand alone (retries, refusals). */
function blockItem(block: PooledBlock): Pending {
  const { body, ends, lines } = block;
  return {
    pieces: [body],
    bytes: body.length,
    documents: ends.length,
    line: lines[0]!,
    document(k) {
      const piece = body.subarray(k === 0 ? 0 : ends[k - 1], ends[k]);
      return { pieces: [piece], bytes: piece.length, line: lines[k]! } as Pending;
    },
  };
}

export function checkIntegrity(file: BundleFile, actual: Integrity): void {
  for (const key of ['sha256', 'sizeBytes', 'rowCount'] as const) {
    if (actual[key] !== file[key]) {
      throw new LoadError(`${key} mismatch: manifest says ${file[key]}, the file has ${actual[key]}`, { file: file.path });
    }
  }
}

export async function loadJsonlFile(options: LoadFileOptions): Promise<FileLoadResult> {
  const { client, file, index, description, context, progress, previous, update = false, against, lineIndex, indexedAt, sequence, signal, flushBytes = DEFAULT_FLUSH_BYTES, slots, concurrency = slots?.size ?? 3 } = options;
  const started = performance.now();
  const pool = !update && description.prepare === undefined ? options.pool : undefined;
  const shapeChecked = description.requiredFields.length > 0;
  // Without a line index an update asks Elasticsearch, and sweeps by the ids it collects.
  const ids = update && !against ? new IdSet(file.rowCount) : undefined;
  const versionBase = sequence * 2 ** 32;
  const carries = description.firstSeen === true;
  /** The first fault: a LoadError naming `file:line`, or the caller's abort as it was thrown. */
  let failure: Error | undefined;
  let rows = 0;
  let written = 0;
  let blankLines = 0;
  let match: FileLoadResult['match'];

  const toDocument = (text: string, line: number) => parseRow(text, line, file.path, description, context);

  /** The bulk item of a finished document. The exported line is its row, unless the description put a view there. */
  function toPending(built: BuiltRow, bytes: Buffer, line: number, rowHash: string, firstSeen?: string): Pending {
    written += 1;
    progress.increment();
    const pieces = bulkLines(built, bytes, line, rowHash, versionBase, description, carries ? (firstSeen ?? indexedAt) : undefined);
    return { pieces, bytes: pieces.reduce((n, piece) => n + piece.length, 0), line };
  }

  /** Documents that read more before they are final: other rows of the generation (`prepare`), first-seen instants of the previous index. */
  const waits = description.prepare !== undefined || (carries && previous !== undefined);
  type Waiting = BuiltRow & { bytes: Buffer; line: number; hash: string };

  /** Rows parsed → their bulk items, once what they wait for is read (one request each per batch). */
  async function finished(waiting: Waiting[]): Promise<Pending[]> {
    if (waiting.length === 0) return [];
    // Killmail actors from this generation's entities and relations, first-seen instants from the previous index.
    const [seen] = await Promise.all([
      carries && previous ? previous.firstSeen(waiting.map((w) => w.doc.id)) : undefined,
      description.prepare?.(waiting.map((w) => w.doc), context),
    ]);
    return waiting.map(({ bytes, line, hash, ...built }) => toPending(built, bytes, line, hash, seen?.get(built.doc.id)));
  }

  /** Chunks of lines (one, or a stitched line and the chunk after it) → their bulk items; their blocks go into the line index. */
  async function itemsOf(chunks: LineChunk[]): Promise<Pending[]> {
    signal?.throwIfAborted();
    // Every raw line, blank ones too: a line index records each where it stands, in order.
    const raw: (RowLine & { digest: Buffer; cutter?: BlockCutter })[] = [];
    const cutters: BlockCutter[] = [];
    for (const chunk of chunks) {
      const cutter = lineIndex ? new BlockCutter(chunk.bytes) : undefined;
      if (cutter) cutters.push(cutter);
      for (const line of rowLinesOf(chunk, file.path, shapeChecked)) raw.push({ ...line, digest: line.blank ? NO_DIGEST : lineDigest(line.bytes), cutter });
    }
    const lines = raw.filter((l) => !l.blank);
    rows += lines.length;
    blankLines += raw.length - lines.length;
    // An update without a line index: lines the clone already holds, byte for byte, are neither
    // parsed nor sent — unless their id came before in the file (then the last line must win: it is sent).
    const kept = update && previous && lines.length > 0 ? await previous.unchanged(lines.map((l) => rowHashText(l.digest))) : undefined;
    // Without lookups each row becomes its bulk text at once, so parsed rows die young instead of
    // surviving awaits into the old generation (that alone took the loader's RSS up by ~100 MB).
    const items: Pending[] = [];
    const waiting: Waiting[] = [];
    for (const { text, bytes, line, digest, end, cutter, blank } of raw) {
      if (blank) {
        cutter?.line(end, undefined);
        continue;
      }
      const hash = rowHashText(digest);
      const known = kept?.get(hash);
      if (known !== undefined && !ids!.add(known)) {
        progress.increment();
        cutter?.line(end, entryOf(digest, known));
        continue;
      }
      const built = toDocument(text, line);
      if (ids && known === undefined) ids.add(built.doc.id);
      cutter?.line(end, entryOf(digest, built.doc.id));
      if (waits) waiting.push({ ...built, bytes, line, hash });
      else items.push(toPending(built, bytes, line, hash));
    }
    for (const cutter of cutters) {
      cutter.cut();
      for (const block of cutter.out) lineIndex!.block(block);
    }
    items.push(...(await finished(waiting)));
    return items;
  }

  /** Lines parsed on this thread, a chunk read ahead. */
  async function* documents(): AsyncGenerator<Pending> {
    const stream = readChunks(file, { signal });
    integrity = () => stream.integrity();
    try {
      const chunks = stream.chunks[Symbol.asyncIterator]();
      // One chunk ahead: its lookups and parsing run while the bulk requests of the one before
      // are sent (one chunk at a time: its blocks go into the line index before the next one's).
      const ahead = async () => {
        const next = await chunks.next();
        if (next.done) return undefined;
        // A stitched line goes with the chunk after it: one batch, one round of lookups.
        const after = next.value.stitched ? await chunks.next() : undefined;
        return itemsOf(after && !after.done ? [next.value, after.value] : [next.value]);
      };
      let pending = ahead();
      for (;;) {
        const items = await pending;
        if (!items || failure) return;
        pending = ahead();
        // Awaited at the next turn; if the bulk stops first, its failure is not an unhandled one.
        pending.catch(() => {});
        yield* items;
      }
    } catch (error) {
      const kept = error instanceof LoadError || (error as Error).name === 'AbortError';
      failure ??= kept ? (error as Error) : new LoadError((error as Error).message, { file: file.path });
    }
  }

  /**
   * An update over the live index's line index: each chunk merged against it (line-match.ts),
   * only the lines it does not hold parsed and sent. Gives up for a build (RebuildInstead) as soon
   * as the file shows it mostly changed.
   */
  async function* matchedDocuments(old: NonNullable<LoadFileOptions['against']>): AsyncGenerator<Pending> {
    const stream = readChunks(file, { signal });
    integrity = () => stream.integrity();
    let waiting: Waiting[] = [];
    const matcher = new LineMatcher(old, lineIndex, file.path, (found) => {
      if (blankRow(found, file.path, shapeChecked)) return undefined;
      const { text, bytes, line, digest } = found;
      const built = toDocument(text, line);
      waiting.push({ ...built, bytes, line, hash: rowHashText(digest) });
      return built.doc.id;
    });
    let counted = 0;
    /** The items of the lines sent since the last call, and the skipped ones counted. */
    const drain = async (): Promise<Pending[]> => {
      const batch = waiting;
      waiting = [];
      progress.increment(matcher.counts.unchanged - counted);
      counted = matcher.counts.unchanged;
      if (waits) return finished(batch);
      return batch.map(({ bytes, line, hash, ...built }) => toPending(built, bytes, line, hash));
    };
    const check = () => {
      const { sent, lines } = matcher.counts;
      if (!updateStillPays({ sent, matched: matcher.matched, rows: file.rowCount, previousDocuments: old.header.entries })) {
        throw new RebuildInstead(`${sent} of the first ${lines} lines are not in the live index`);
      }
    };
    try {
      for await (const chunk of stream.chunks) {
        signal?.throwIfAborted();
        matcher.push(chunk.bytes);
        check();
        yield* await drain();
        if (failure) return;
      }
      matcher.end();
      check();
      yield* await drain();
      const { unchanged, sent, blankLines: blank, lines } = matcher.counts;
      rows = unchanged + sent;
      blankLines = blank;
      match = { ...matcher.counts, ...matcher.finish(), lines };
    } catch (error) {
      const kept = error instanceof LoadError || error instanceof RebuildInstead || (error as Error).name === 'AbortError';
      failure ??= kept ? (error as Error) : new LoadError((error as Error).message, { file: file.path });
    }
  }

  /**
   * Lines parsed on the pool's workers: this thread reads (hash and counts stay in file order),
   * keeps a few chunks ahead on the workers, and sends their blocks in file order, so the first
   * bad line is the one reported, as on this thread.
   */
  async function* pooledDocuments(pool: ParsePool): AsyncGenerator<Pending> {
    const stream = readChunks(file, { signal });
    integrity = () => stream.integrity();
    // Chunks still queued when the file stops (a bad line, an abort) are dropped from the pool.
    const stop = new AbortController();
    const jobSignal = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
    const firstSeen = carries && previous ? (ids: string[]) => previous.firstSeen(ids) : undefined;
    const window = Math.min(MAX_CHUNKS_AHEAD, pool.size + 1);
    const ahead: Promise<Awaited<ReturnType<ParsePool['parse']>>>[] = [];
    try {
      const chunks = stream.chunks[Symbol.asyncIterator]();
      let ended = false;
      for (;;) {
        while (!ended && ahead.length < window) {
          const next = await chunks.next();
          if (next.done) {
            ended = true;
            break;
          }
          const { bytes, firstLine } = next.value;
          const job = pool.parse({ file: file.path, index: description.name, bytes, firstLine, versionBase, indexedAt, lookup: firstSeen !== undefined, flushBytes, lineIndex: lineIndex !== undefined }, { firstSeen, signal: jobSignal });
          // Awaited in turn; if the file stops first, its failure is not an unhandled one.
          job.catch(() => {});
          ahead.push(job);
        }
        if (ahead.length === 0) return;
        const result = await ahead.shift()!;
        if (failure) return;
        rows += result.rows;
        blankLines += result.blankLines;
        if (result.lineIndex) lineIndex!.encoded(result.lineIndex.bytes, result.lineIndex.blocks, result.lineIndex.entries);
        for (const block of result.blocks) {
          written += block.ends.length;
          progress.increment(block.ends.length);
          yield blockItem(block);
        }
      }
    } catch (error) {
      const kept = error instanceof LoadError || (error as Error).name === 'AbortError';
      failure ??= kept ? (error as Error) : new LoadError((error as Error).message, { file: file.path });
    } finally {
      stop.abort();
    }
  }

  let integrity: () => Integrity = () => {
    throw new Error('integrity is known only after the last line');
  };
  const items = against ? matchedDocuments(against) : pool ? pooledDocuments(pool) : documents();
  const sent = await sendBulk(client, items, { index, flushBytes, concurrency, slots, signal });
  if (failure instanceof RebuildInstead) throw failure;
  if (sent.refused) throw new LoadError(`Elasticsearch refused the row (${sent.refused.reason})`, { file: file.path, line: sent.refused.item.line });
  if (failure) throw failure;
  checkIntegrity(file, integrity());
  if (sent.successful + sent.superseded !== written) {
    throw new LoadError(`Elasticsearch acknowledged ${sent.successful} of ${written} rows`, { file: file.path });
  }
  const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  return { file: file.path, index, rows, written, ids, match, blankLines, seconds: (performance.now() - started) / 1000, peakRssMb, pooled: pool !== undefined };
}
