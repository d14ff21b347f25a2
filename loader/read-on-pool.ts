/**
 * A file's lines parsed on the parse pool's worker threads (parse-pool.ts), for a build: the
 * workers do the per-row work (split, UTF-8, parse, document, hash, bulk bytes: row-document.ts,
 * the same code as on the loader's thread); this thread reads, hashes and counts the file in
 * order, keeps a few chunks ahead on the workers, and sends their blocks in file order, so the
 * first bad line is the one reported, as on this thread.
 */
import type { IndexDescription } from '../src/indices/description.ts';
import type { LineIndexWriter } from './line-index.ts';
import type { ItemSource } from './load-file.ts';
import type { ParsePool } from './parse-pool.ts';
import type { PreviousIndex } from './previous-index.ts';
import type { ChunkStream } from './read-lines.ts';
import type { Pending, RowItems } from './row-items.ts';

/** Chunks of a file on the parse pool or waiting for it, at most: keeps the workers busy, and bounds the bytes held (a megabyte read, about as much built, each). */
const MAX_CHUNKS_AHEAD = 8;

export interface PoolReading {
  pool: ParsePool;
  file: { path: string };
  description: IndexDescription<any>;
  previous?: PreviousIndex;
  indexedAt: string;
  flushBytes: number;
  lineIndex?: LineIndexWriter;
  signal?: AbortSignal;
}

export function readOnPool(rows: RowItems, stream: ChunkStream, reading: PoolReading): ItemSource {
  const { pool, file, description, previous, indexedAt, flushBytes, lineIndex, signal } = reading;
  let lineCount = 0;
  let blankLines = 0;
  const firstSeen = rows.carries && previous ? (ids: string[]) => previous.firstSeen(ids) : undefined;
  const window = Math.min(MAX_CHUNKS_AHEAD, pool.size + 1);

  async function* items(): AsyncGenerator<Pending> {
    // Chunks still queued when the file stops (a bad line, an abort) are dropped from the pool.
    const stop = new AbortController();
    const jobSignal = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
    const ahead: ReturnType<ParsePool['parse']>[] = [];
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
          const request = { file: file.path, index: description.name, bytes, firstLine, versionBase: rows.versionBase, indexedAt, lookup: firstSeen !== undefined, flushBytes, lineIndex: lineIndex !== undefined };
          const job = pool.parse(request, { firstSeen, signal: jobSignal });
          // Awaited in turn; if the file stops first, its failure is not an unhandled one.
          job.catch(() => {});
          ahead.push(job);
        }
        if (ahead.length === 0) return;
        const result = await ahead.shift()!;
        lineCount += result.rows;
        blankLines += result.blankLines;
        if (result.lineIndex) lineIndex!.encoded(result.lineIndex.bytes, result.lineIndex.blocks, result.lineIndex.entries);
        for (const block of result.blocks) yield rows.block(block);
      }
    } finally {
      stop.abort();
    }
  }

  return { items: items(), counts: () => ({ rows: lineCount, blankLines }), pooled: true };
}
