/**
 * A file's lines parsed on the loader's thread, a chunk read ahead: its lookups and parsing run
 * while the bulk requests of the one before are sent (one chunk at a time: its blocks go into
 * the line index before the next one's). A build of a description that reads other indices per
 * batch (`prepare`) reads this way, and so does an update that asks Elasticsearch which lines
 * it holds (`lookup`: update-by-lookup.ts).
 */
import { BlockCutter, type LineIndexWriter, entryOf, lineDigest, rowHashText } from './line-index.ts';
import type { IdSet } from './id-set.ts';
import type { ItemSource } from './load-file.ts';
import type { PreviousIndex } from './previous-index.ts';
import { type ChunkStream, type LineChunk, type RowLine, rowLinesOf } from './read-lines.ts';
import type { Pending, RowItems, Waiting } from './row-items.ts';

/** The digest a blank line stands with: it has no entry, and nothing looks it up. */
const NO_DIGEST = Buffer.alloc(0);

export interface ThreadReading {
  file: { path: string };
  lineIndex?: LineIndexWriter;
  /**
   * An update of a clone of `previous`: lines it holds byte for byte are neither parsed nor sent
   * unless their id came before in the file (then the last line must win: it is sent); `ids`
   * collects the file's ids for the sweep of the rows that left.
   */
  lookup?: { previous: PreviousIndex; ids: IdSet };
  signal?: AbortSignal;
}

export function readOnThread(rows: RowItems, stream: ChunkStream, reading: ThreadReading): ItemSource {
  const { file, lineIndex, lookup, signal } = reading;
  let lineCount = 0;
  let blankLines = 0;

  /** Chunks of lines (one, or a stitched line and the chunk after it) → their bulk items; their blocks go into the line index. */
  async function itemsOf(chunks: LineChunk[]): Promise<Pending[]> {
    signal?.throwIfAborted();
    // Every raw line, blank ones too: a line index records each where it stands, in order.
    const raw: (RowLine & { digest: Buffer; cutter?: BlockCutter })[] = [];
    const cutters: BlockCutter[] = [];
    for (const chunk of chunks) {
      const cutter = lineIndex ? new BlockCutter(chunk.bytes) : undefined;
      if (cutter) cutters.push(cutter);
      for (const line of rowLinesOf(chunk, file.path, rows.shapeChecked)) raw.push({ ...line, digest: line.blank ? NO_DIGEST : lineDigest(line.bytes), cutter });
    }
    const lines = raw.filter((l) => !l.blank);
    lineCount += lines.length;
    blankLines += raw.length - lines.length;
    const kept = lookup && lines.length > 0 ? await lookup.previous.unchanged(lines.map((l) => rowHashText(l.digest))) : undefined;
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
      if (known !== undefined && !lookup!.ids.add(known)) {
        rows.skipped();
        cutter?.line(end, entryOf(digest, known));
        continue;
      }
      const built = rows.parse(text, line);
      if (lookup && known === undefined) lookup.ids.add(built.doc.id);
      cutter?.line(end, entryOf(digest, built.doc.id));
      if (rows.waits) waiting.push({ ...built, bytes, line, hash });
      else items.push(rows.item(built, bytes, line, hash));
    }
    for (const cutter of cutters) {
      cutter.cut();
      for (const block of cutter.out) lineIndex!.block(block);
    }
    items.push(...(await rows.items(waiting)));
    return items;
  }

  async function* items(): AsyncGenerator<Pending> {
    const chunks = stream.chunks[Symbol.asyncIterator]();
    const ahead = async () => {
      const next = await chunks.next();
      if (next.done) return undefined;
      // A stitched line goes with the chunk after it: one batch, one round of lookups.
      const after = next.value.stitched ? await chunks.next() : undefined;
      return itemsOf(after && !after.done ? [next.value, after.value] : [next.value]);
    };
    let pending = ahead();
    for (;;) {
      const batch = await pending;
      if (!batch) return;
      pending = ahead();
      // Awaited at the next turn; if the bulk stops first, its failure is not an unhandled one.
      pending.catch(() => {});
      yield* batch;
    }
  }

  return { items: items(), counts: () => ({ rows: lineCount, blankLines }) };
}
