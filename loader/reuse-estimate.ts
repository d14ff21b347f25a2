/**
 * How much of a file an update would keep (plan.ts `updatePays`): the hashes of lines sampled
 * evenly over the whole file, looked up in the live index's row hashes (ROW_HASH, which every
 * document carries). Whole-file sampling matters: a next export puts its new rows on top, so
 * the first lines of a file say nothing of the rest.
 *
 * The sampler reads the stored bytes (gunzipped when a `.gz` twin) without decoding or
 * splitting them into lines: per stride it looks for the next newline and hashes the line
 * after it, so a pass costs little more than reading the file. Integrity is not checked here;
 * the load that follows checks every byte.
 */
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { BundleFile } from './bundle.ts';
import { lineHash } from './load-file.ts';
import type { ReuseEstimate } from './plan.ts';
import type { PreviousIndex } from './previous-index.ts';

/** Lines sampled per file: the share they estimate is within ±3 % (two standard deviations) of the file's. */
export const SAMPLE_LINES = 1000;

const NEWLINE = 0x0a;
const CR = 0x0d;

/** The hashes of about `count` lines spread evenly over the file's uncompressed bytes (its first line never among them). */
export async function sampleLineHashes(file: Pick<BundleFile, 'open' | 'gzip' | 'sizeBytes'>, count: number, signal?: AbortSignal): Promise<string[]> {
  const stride = Math.max(1, Math.floor(file.sizeBytes / count));
  const stored = file.open({ signal });
  let source: Readable | undefined;
  let input: AsyncIterable<Buffer> = stored;
  if (file.gzip) {
    source = Readable.from(stored, { objectMode: false });
    const gunzip = source.pipe(createGunzip());
    source.once('error', (error) => gunzip.destroy(error));
    input = gunzip;
  }
  const hashes: string[] = [];
  const take = (bytes: Buffer) => {
    const end = bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.length - 1 : bytes.length;
    if (end > 0) hashes.push(lineHash(bytes.subarray(0, end)));
  };
  // `target`: the offset after which the next newline starts a sampled line; `parts`: that line so far.
  let position = 0;
  let target = Math.floor(stride / 2);
  let parts: Buffer[] | undefined;
  try {
    for await (const chunk of input) {
      let at = 0;
      for (;;) {
        if (parts) {
          const end = chunk.indexOf(NEWLINE, at);
          if (end === -1) {
            parts.push(Buffer.from(chunk.subarray(at)));
            break;
          }
          take(parts.length ? Buffer.concat([...parts, chunk.subarray(at, end)]) : chunk.subarray(at, end));
          at = end + 1;
          target += stride;
          // The next mark already passed (lines longer than the stride): the line starting here is the next one sampled.
          parts = target < position + at ? [] : undefined;
          continue;
        }
        const from = Math.max(at, target - position);
        if (from >= chunk.length) break;
        const newline = chunk.indexOf(NEWLINE, from);
        if (newline === -1) {
          target = position + chunk.length;
          break;
        }
        parts = [];
        at = newline + 1;
      }
      position += chunk.length;
    }
  } finally {
    source?.destroy();
  }
  return hashes;
}

/**
 * The estimate for one file against the live index of its name; undefined when the file cannot
 * be read (the load then reads it, and refuses it with the precise `file:line`).
 */
export async function estimateReuse(
  file: Pick<BundleFile, 'open' | 'gzip' | 'sizeBytes' | 'rowCount'>,
  previous: PreviousIndex,
  previousDocuments: number,
  signal?: AbortSignal,
): Promise<ReuseEstimate | undefined> {
  let hashes: string[];
  try {
    hashes = await sampleLineHashes(file, SAMPLE_LINES, signal);
  } catch (error) {
    if (signal?.aborted) throw error;
    return undefined;
  }
  const found = await previous.unchanged(hashes);
  const unchanged = hashes.filter((hash) => found.has(hash)).length;
  // No line sampled (an empty or one-line file): nothing tells against an update.
  const unchangedShare = hashes.length === 0 ? 1 : unchanged / hashes.length;
  return { rows: file.rowCount, unchangedShare, previousDocuments };
}
