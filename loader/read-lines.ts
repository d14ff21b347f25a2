/**
 * Streams a bundle file, plain or gzip, as numbered lines, in batches (one per chunk read),
 * while measuring what the manifest promises about its uncompressed bytes: sha256, size and
 * row count (the verifier's rule: `\n` bytes, plus one for a last line without one).
 *
 * Lines are split as bytes (a `\n` byte never occurs inside a UTF-8 sequence), and each line
 * must be valid UTF-8: a decoder would silently turn bad bytes into U+FFFD and serve them as
 * data. A trailing `\r` (CRLF files) is not part of a line. Memory stays bounded by the
 * chunk size and the longest line, whatever the file size. Multi-member gzip (concatenated
 * copies) is read whole, as `zlib.createGunzip` does.
 *
 * The bytes come from the file's `open()` (a local read, or a store read that retries and
 * resumes inside, source.ts); small network chunks are gathered to about a megabyte, so a batch
 * is as large from a store as from a disk.
 */
import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { BundleFile } from './bundle.ts';
import { StoreError } from '../src/store/errors.ts';
import { LoadError } from './errors.ts';

/** What was measured over the uncompressed bytes once the stream has ended. */
export interface Integrity {
  sha256: string;
  sizeBytes: number;
  rowCount: number;
}

export interface Line {
  text: string;
  /** The line's bytes (a view of the chunk read: no copy). */
  bytes: Buffer;
  /** 1-based line number. */
  line: number;
}

/** A file's lines in batches, and its integrity once every line has been read. */
export interface LineStream {
  batches: AsyncIterable<Line[]>;
  integrity(): Integrity;
}

const NEWLINE = 0x0a;
const CR = 0x0d;
const CHUNK_BYTES = 1 << 20;

/**
 * Chunks of at least `min` bytes (the last may be smaller): fewer, larger batches of lines. What
 * was gathered before a failure is still given first, so the error names the last good line.
 */
async function* gathered(chunks: AsyncIterable<Buffer>, min: number): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let size = 0;
  let failure: unknown;
  try {
    for await (const chunk of chunks) {
      if (size === 0 && chunk.length >= min) {
        yield chunk;
        continue;
      }
      pending.push(chunk);
      size += chunk.length;
      if (size >= min) {
        yield Buffer.concat(pending, size);
        pending = [];
        size = 0;
      }
    }
  } catch (error) {
    failure = error;
  }
  if (size > 0) yield Buffer.concat(pending, size);
  if (failure !== undefined) throw failure;
}

/**
 * Whole lines of a file, as read: `bytes` holds `lines` lines from `firstLine` on, each ended by
 * `\n` but the file's last line when it has none. Not yet split nor checked as UTF-8, so that
 * work can be done elsewhere (`linesOf`, on a worker thread: loader/parse-pool.ts).
 */
export interface LineChunk {
  bytes: Buffer;
  firstLine: number;
  lines: number;
  /**
   * The one line that began in the bytes read before and ends in these (the chunk after it is a
   * view of the bytes read, not a copy): a reader that batches lines takes it with the next chunk.
   */
  stitched?: boolean;
}

/** A file's whole-line chunks, and its integrity once every chunk has been read. */
export interface ChunkStream {
  chunks: AsyncIterable<LineChunk>;
  integrity(): Integrity;
}

/**
 * The lines of a chunk (`readChunks`), numbered, each checked as UTF-8 (a LoadError naming
 * `name:line` otherwise); a trailing `\r` is dropped. The bytes of a line are a view of the chunk.
 */
export function linesOf(chunk: LineChunk, name: string): Line[] {
  const { bytes, firstLine } = chunk;
  const lines: Line[] = [];
  let line = firstLine;
  let start = 0;
  for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, start)) {
    lines.push(decode(bytes.subarray(start, at), line++, name));
    start = at + 1;
  }
  if (start < bytes.length) lines.push(decode(bytes.subarray(start), line, name));
  return lines;
}

/** A line of a row file, where it ends in its chunk (after its `\n`: where the next one starts), and whether it is blank (`blankRow`). */
export interface RowLine extends Line {
  end: number;
  blank: boolean;
}

/**
 * Whether a line is blank, by the one rule of every reader of row files (the file loader, the
 * parse workers, the line matcher): the registry's verifier refuses blank lines only in the files
 * it shape-checks (a LoadError naming `name:line`); elsewhere a blank line is no row.
 */
export function blankRow({ text, line }: Line, name: string, shapeChecked: boolean): boolean {
  if (text.trim() !== '') return false;
  if (shapeChecked) throw new LoadError('blank line', { file: name, line });
  return true;
}

/**
 * The lines of a chunk of a row file (`linesOf`), in order, each with where it ends and whether it
 * is blank: no row, but a raw line a line index records where it stands.
 */
export function rowLinesOf(chunk: LineChunk, name: string, shapeChecked: boolean): RowLine[] {
  const lines = linesOf(chunk, name);
  return lines.map((line, i) => ({
    ...line,
    end: i + 1 < lines.length ? lines[i + 1]!.bytes.byteOffset - chunk.bytes.byteOffset : chunk.bytes.length,
    blank: blankRow(line, name, shapeChecked),
  }));
}

function decode(bytes: Buffer, line: number, name: string): Line {
  const end = bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.length - 1 : bytes.length;
  const content = bytes.subarray(0, end);
  if (!isUtf8(content)) throw new LoadError('not valid UTF-8', { file: name, line });
  return { text: content.toString('utf8'), bytes: content, line };
}

/**
 * @param file what is read: its stored bytes (`open`), gzip or not; errors name it by its
 *   manifest `path` (the `.gz` twin's name for a broken gzip stream), with `file:line` added here
 * @param options.signal stops the read (the error is the AbortError, as thrown)
 */
export function readLines(file: Pick<BundleFile, 'open' | 'gzip' | 'path' | 'location'>, options: { signal?: AbortSignal } = {}): LineStream {
  const stream = readChunks(file, options);
  async function* batches(): AsyncGenerator<Line[]> {
    for await (const chunk of stream.chunks) yield linesOf(chunk, file.path);
  }
  return { batches: batches(), integrity: () => stream.integrity() };
}

/**
 * The file as chunks of whole lines (about a megabyte each), hashed and counted as they are
 * read; the line left unfinished at a chunk's end is carried into the next one.
 */
export function readChunks(file: Pick<BundleFile, 'open' | 'gzip' | 'path' | 'location'>, options: { signal?: AbortSignal } = {}): ChunkStream {
  const { gzip, path: name } = file;
  const hash = createHash('sha256');
  let size = 0;
  let newlines = 0;
  let lastByte = -1;
  let done = false;
  // Errors of the compressed stream name the `.gz` file that is actually broken.
  const where = gzip ? `${name}.gz` : name;

  async function* chunks(): AsyncGenerator<LineChunk> {
    const stored = file.open({ signal: options.signal });
    let input: AsyncIterable<Buffer> = stored;
    let source: Readable | undefined;
    if (gzip) {
      source = Readable.from(stored, { objectMode: false });
      const gunzip = source.pipe(createGunzip({ chunkSize: CHUNK_BYTES }));
      // An error of the stored bytes must reach the reader of the gunzip stream, not vanish in the pipe.
      source.once('error', (error) => gunzip.destroy(error));
      input = gunzip;
    }
    let carry: Buffer | undefined;
    let line = 0;
    try {
      for await (const chunk of gathered(input, CHUNK_BYTES)) {
        hash.update(chunk);
        size += chunk.length;
        lastByte = chunk[chunk.length - 1]!;
        let count = 0;
        let last = -1;
        for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, at + 1)) {
          count += 1;
          last = at;
        }
        if (count === 0) {
          // No line ends here: the chunk only extends the unfinished one (copied: chunks are not kept alive).
          carry = carry ? Buffer.concat([carry, chunk]) : Buffer.from(chunk);
          continue;
        }
        newlines += count;
        let from = 0;
        if (carry) {
          // The line read in two parts is one chunk of its own, so that the rest is not copied.
          const first = chunk.indexOf(NEWLINE);
          line += 1;
          count -= 1;
          yield { bytes: Buffer.concat([carry, chunk.subarray(0, first + 1)]), firstLine: line, lines: 1, stitched: true };
          from = first + 1;
        }
        // The unfinished last line is copied, so the chunk it came from is not kept alive by it.
        carry = last + 1 < chunk.length ? Buffer.from(chunk.subarray(last + 1)) : undefined;
        if (count > 0) {
          yield { bytes: chunk.subarray(from, last + 1), firstLine: line + 1, lines: count };
          line += count;
        }
      }
    } catch (error) {
      if (error instanceof LoadError || (error as Error).name === 'AbortError') throw error;
      // A store that refused or never came back: its one line names the URL and the status.
      if (error instanceof StoreError) throw new LoadError(error.message, { transient: error.transient });
      const reason = (error as Error).message;
      const after = line > 0 ? `after line ${line}` : 'before the first line';
      throw new LoadError(gzip ? `truncated or corrupt gzip (${reason}) ${after}` : `${reason} ${after}`, { file: where });
    } finally {
      // A reader that stops early (a bad line) closes the stored bytes too (a store connection).
      source?.destroy();
    }
    if (carry !== undefined && carry.length > 0) yield { bytes: carry, firstLine: line + 1, lines: 1 };
    done = true;
  }

  return {
    chunks: chunks(),
    integrity() {
      if (!done) throw new Error('integrity is known only after the last line');
      const unterminated = size > 0 && lastByte !== NEWLINE ? 1 : 0;
      return { sha256: hash.digest('hex'), sizeBytes: size, rowCount: newlines + unterminated };
    },
  };
}
