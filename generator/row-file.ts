/**
 * Streams rows into one bundle file, plain or gzip, while measuring what the manifest must say
 * about the uncompressed bytes (sha256, size, row count) and remembering the first and last row
 * keys for the high-water marks. Also writes the small pretty JSON documents.
 *
 * Rows are encoded one by one and flushed in ~256 KiB chunks through the file (or gzip) stream,
 * waiting for `drain` whenever the stream asks for it, so memory stays flat whatever the file
 * size. Gzip output is deterministic: same bytes in, same chunking, fixed level, zero mtime.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { constants, createGzip } from 'node:zlib';
import type { ManifestFile } from '../loader/bundle.ts';
import { encodeLine, encodePretty } from './go-json.ts';

const FLUSH_CHARS = 256 * 1024;


/** The key (and time) of a row, as the high-water marks name it. */
export interface RowMark {
  id: string;
  time?: string;
}

export interface RowFileResult {
  entry: ManifestFile;
  first?: RowMark;
  last?: RowMark;
}

export interface RowFileOptions {
  /** Write only `<name>.gz` (the manifest still describes the uncompressed bytes). */
  gzip: boolean;
  /** The key of a row for the high-water marks. */
  mark: (row: Record<string, unknown>) => RowMark;
}

export class RowFile {
  readonly name: string;
  readonly #hash = createHash('sha256');
  readonly #sink: Writable;
  readonly #finished: Promise<void>;
  readonly #mark: RowFileOptions['mark'];
  #failure: unknown;
  #pending: string[] = [];
  #pendingChars = 0;
  #size = 0;
  #rows = 0;
  #first: RowMark | undefined;
  #lastRow: Record<string, unknown> | undefined;

  constructor(dir: string, name: string, options: RowFileOptions) {
    this.name = name;
    this.#mark = options.mark;
    // Deep buffers let the next rows be encoded while fs and zlib work on the thread pool.
    const file = createWriteStream(path.join(dir, options.gzip ? `${name}.gz` : name), { highWaterMark: 4 * FLUSH_CHARS });
    if (options.gzip) {
      // zlib passes stream options on to its Transform; the typings only list zlib's own.
      // A chunk size above the flush size compresses each flushed chunk in one thread-pool job.
      const gzipOptions = {
        level: 6, memLevel: 8, strategy: constants.Z_DEFAULT_STRATEGY, chunkSize: 4 * FLUSH_CHARS, writableHighWaterMark: 16 * FLUSH_CHARS,
      };
      const gzip = createGzip(gzipOptions);
      this.#sink = gzip;
      this.#finished = pipeline(gzip, file);
    } else {
      this.#sink = file;
      this.#finished = finished(file);
    }
    // Keep a failure until the next write or close reports it.
    this.#finished.catch((error: unknown) => (this.#failure = error ?? new Error(`writing ${name} failed`)));
  }

  /** Number of rows written so far. */
  get rowCount(): number {
    return this.#rows;
  }

  /** Appends one row (compact JSON + `\n`). */
  async write(row: Record<string, unknown>): Promise<void> {
    if (this.#failure) throw this.#failure;
    const line = encodeLine(row);
    this.#pending.push(line);
    this.#pendingChars += line.length;
    this.#rows += 1;
    if (this.#rows === 1) this.#first = this.#mark(row);
    this.#lastRow = row;
    if (this.#pendingChars >= FLUSH_CHARS) await this.#flush();
  }

  async #flush(): Promise<void> {
    if (this.#pending.length === 0) return;
    const chunk = Buffer.from(this.#pending.join(''), 'utf8');
    this.#pending = [];
    this.#pendingChars = 0;
    this.#hash.update(chunk);
    this.#size += chunk.length;
    if (!this.#sink.write(chunk)) await once(this.#sink, 'drain');
    // Rows are produced synchronously; yielding to the event loop here lets fs and zlib callbacks
    // start their next job on the thread pool, so compression overlaps with row generation.
    else await new Promise((resolve) => setImmediate(resolve));
  }

  /** Flushes, closes and returns the manifest entry and the first/last row keys. */
  async close(): Promise<RowFileResult> {
    await this.#flush();
    this.#sink.end();
    await this.#finished;
    if (this.#failure) throw this.#failure;
    const result: RowFileResult = {
      entry: {
        path: this.name,
        contentType: 'application/x-ndjson',
        sha256: this.#hash.digest('hex'),
        sizeBytes: this.#size,
        rowCount: this.#rows,
      },
    };
    if (this.#first) result.first = this.#first;
    if (this.#lastRow) result.last = this.#mark(this.#lastRow);
    return result;
  }
}

/** Writes a pretty JSON document (never gzipped) and returns its manifest entry. */
export async function writeJsonDocument(dir: string, name: string, value: unknown): Promise<ManifestFile> {
  const bytes = Buffer.from(encodePretty(value), 'utf8');
  await writeFile(path.join(dir, name), bytes);
  return {
    path: name,
    contentType: 'application/json',
    sha256: createHash('sha256').update(bytes).digest('hex'),
    sizeBytes: bytes.length,
    rowCount: bytes.length > 0 ? 1 : 0,
  };
}
