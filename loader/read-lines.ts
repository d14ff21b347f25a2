/**
 * Streams a bundle file, plain or gzip, as numbered lines while measuring what the
 * manifest promises about its uncompressed bytes: sha256, size and row count (the
 * verifier's rule: `\n` bytes, plus one for a last line without one).
 *
 * Memory stays bounded by the longest line, whatever the file size. Multi-member gzip
 * (concatenated copies) is read whole, as `zlib.createGunzip` does.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { Transform, type TransformCallback } from 'node:stream';
import { createGunzip } from 'node:zlib';

/** What was measured over the uncompressed bytes once the stream has ended. */
export interface Integrity {
  sha256: string;
  sizeBytes: number;
  rowCount: number;
}

class Measure extends Transform {
  readonly #hash = createHash('sha256');
  #size = 0;
  #newlines = 0;
  #last = -1;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.#hash.update(chunk);
    this.#size += chunk.length;
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) this.#newlines += 1;
    if (chunk.length > 0) this.#last = chunk[chunk.length - 1]!;
    done(null, chunk);
  }

  result(): Integrity {
    const unterminated = this.#size > 0 && this.#last !== 10 ? 1 : 0;
    return { sha256: this.#hash.digest('hex'), sizeBytes: this.#size, rowCount: this.#newlines + unterminated };
  }
}

/** A file's lines, and its integrity once every line has been read. */
export interface LineStream {
  lines: AsyncIterable<{ text: string; line: number }>;
  integrity(): Integrity;
}

export function readLines(path: string, gzip: boolean): LineStream {
  const measure = new Measure();
  const source = createReadStream(path, { highWaterMark: 1 << 20 });
  const decoded = gzip ? source.pipe(createGunzip()) : source;
  // Errors of the file or of gunzip must reach the reader, not vanish in a pipe.
  source.on('error', (error) => measure.destroy(error));
  if (gzip) decoded.on('error', (error: Error) => measure.destroy(error));
  const reader = createInterface({ input: decoded.pipe(measure), crlfDelay: Infinity });
  let done = false;
  async function* lines() {
    let line = 0;
    for await (const text of reader) {
      line += 1;
      yield { text, line };
    }
    done = true;
  }
  return {
    lines: lines(),
    integrity() {
      if (!done) throw new Error('integrity is known only after the last line');
      return measure.result();
    },
  };
}
