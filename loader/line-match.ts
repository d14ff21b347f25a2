/**
 * The next export of a file against the line index of the live index (line-index.ts), as a
 * merge in file order: which lines the live index already holds byte for byte (skipped), which
 * must be sent (new, changed, or a line whose id came before), and, once the file is read,
 * which of the live index's rows left it.
 *
 * A cursor walks the old lines. Where the old file's next block comes next, byte for byte, in
 * the new one, its lines are skipped at the cost of one hash of its bytes. Elsewhere each line is
 * hashed and looked up: first at the cursor, then in a window of the next WINDOW old lines (a
 * hash table over them); a line found moves the cursor past it — the old lines passed over were
 * changed or removed — and a line not found is sent. An unchanged line the window cannot reach
 * (a gap of more than WINDOW removed lines, or a file reordered) is sent again: correct, only
 * slower. Only a line the old index holds is ever skipped, so the merge is exact whatever the
 * order; the order only decides how much is skipped.
 *
 * Repeated ids: a line whose id was sent earlier in the file is sent even when unchanged, so
 * that the last line of an id wins (its document's version says so, row-items.ts). Sent ids go
 * into a Bloom filter checked for every skipped line (16 M bits, two probes: 10⁻⁵ false positives
 * at 20,000 sent lines, and a false positive only sends an unchanged line again) and a sorted
 * list for the end.
 *
 * The end (`finish`): one pass over the old line index says, for each old line not matched,
 * whether its id was sent (changed) or not (removed: its document is deleted), and how many
 * distinct ids the new file has — the documents the updated index must hold.
 *
 * Memory: the window, the Bloom filter (2 MB), a bit per old line and 8 bytes per sent line.
 */
import { isUtf8 } from 'node:buffer';
import { BLOCK_HASH_BYTES, BLOCK_LINES, BLOCK_MAX_BYTES, type Block, BlockReader, ENTRY_BYTES, LINE_HASH_BYTES, type LineIndexHeader, type LineIndexWriter, blockDigest, idDigest, lineDigest } from './line-index.ts';
import { LoadError } from './errors.ts';

/** Old lines a lookup reaches beyond the cursor. */
export const WINDOW = 1 << 18;

const NEWLINE = 0x0a;
const CR = 0x0d;

/** A line to send: its bytes (no `\n` nor `\r`), decoded text, number and hash. */
export interface SentLine {
  text: string;
  bytes: Buffer;
  line: number;
  digest: Buffer;
}

/**
 * Called for each line to send, in file order; returns the line's id (its entry), or undefined
 * for a blank line (counted, never an entry). Throws a LoadError for a bad line.
 */
export type SendLine = (line: SentLine) => string | undefined;

export interface MatchCounts {
  /** Lines skipped: the live index holds them. */
  unchanged: number;
  /** Of those, lines skipped with their whole block (one hash for the block). */
  blockLines: number;
  /** Lines sent. */
  sent: number;
  blankLines: number;
  /** Raw lines read. */
  lines: number;
}

export interface MatchEnd {
  /** Line hashes (LINE_HASH_BYTES) of the old rows that left the file: their documents are deleted. */
  removed: Buffer[];
  /** Distinct ids of the new file: the documents the updated index holds. */
  documents: number;
  /** Old lines whose row changed (their id was sent). */
  changed: number;
  /** The old line hashes of every id sent again (changed, or a later line of it sent): the changes a mirror is told of (loader/changes.ts). */
  changedLines: Buffer[];
}

/** A fixed Bloom filter of 8-byte id hashes (their two halves make the probes). */
class IdBloom {
  static readonly BITS = 1 << 24;
  static readonly PROBES = 2;
  readonly #bits = new Uint32Array(IdBloom.BITS / 32);

  add(id: Uint8Array, at = 0): void {
    const a = readU32(id, at);
    const b = readU32(id, at + 4) | 1;
    for (let i = 0; i < IdBloom.PROBES; i++) {
      const bit = (a + i * b) & (IdBloom.BITS - 1);
      this.#bits[bit >>> 5]! |= 1 << (bit & 31);
    }
  }

  has(id: Uint8Array, at = 0): boolean {
    const a = readU32(id, at);
    const b = readU32(id, at + 4) | 1;
    for (let i = 0; i < IdBloom.PROBES; i++) {
      const bit = (a + i * b) & (IdBloom.BITS - 1);
      if ((this.#bits[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}

function readU32(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

function sameBytes(a: Uint8Array, aAt: number, b: Uint8Array, bAt: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (a[aAt + i] !== b[bAt + i]) return false;
  return true;
}

/** An old block kept in the window: its own copies of the hash and entries. */
interface OldBlock extends Block {
  first: number;
  hash: Buffer;
  data: Buffer;
}

/** The new index's block being gathered line by line. */
interface OpenBlock {
  start: number;
  end: number;
  rawLines: number;
  lines: number;
  entries: Buffer[];
}

export class LineMatcher {
  readonly counts: MatchCounts = { unchanged: 0, blockLines: 0, sent: 0, blankLines: 0, lines: 0 };
  readonly #reader: BlockReader;
  readonly #header: LineIndexHeader;
  readonly #file: string;
  readonly #name: string;
  readonly #writer: LineIndexWriter | undefined;
  readonly #send: SendLine;
  /** Old blocks from the cursor's on, as far as the window reaches. */
  #blocks: OldBlock[] = [];
  #readerDone = false;
  /** Index in #blocks of the block the cursor is in, and entries of it consumed. */
  #at = 0;
  #offset = 0;
  /** Matched old lines, by global entry index. */
  readonly #matched: Uint8Array;
  readonly #bloom = new IdBloom();
  #sentIds = new BigUint64Array(1024);
  #sentCount = 0;
  /** The window's hash table: entry index + 1 by slot, and the entries it covers. */
  #table: Uint32Array | undefined;
  #tableFrom = 0;
  /** Whether the next line may start an old block (after a block or a line that ended one). */
  #tryBlock = true;
  /** An old block that began at the end of the last chunk: checked with the next one. */
  #pending: { buffer: Buffer; pos: number; block: OldBlock } | undefined;
  #open: OpenBlock | undefined;

  /**
   * @param old the live index's line index, checked (`openLineIndex`)
   * @param writer the new index's line index, written as the file is read
   * @param name the file's manifest path, for errors
   */
  constructor(old: { file: string; header: LineIndexHeader }, writer: LineIndexWriter | undefined, name: string, send: SendLine) {
    this.#file = old.file;
    this.#header = old.header;
    this.#reader = new BlockReader(old.file, old.header);
    this.#matched = new Uint8Array(Math.ceil(old.header.entries / 8) + 1);
    this.#writer = writer;
    this.#name = name;
    this.#send = send;
  }

  /** Old lines matched so far. */
  get matched(): number {
    return this.counts.unchanged + this.#forced;
  }
  #forced = 0;

  /** Feeds the next bytes of the file: whole lines (read-lines.ts chunks). */
  push(chunk: Buffer): void {
    this.#feed(chunk);
  }

  /** After the last chunk. */
  end(): void {
    this.#feed(undefined);
    this.#reader.close();
  }

  /**
   * Where an old block began at the end of the last chunk, it is checked across the two (hashed
   * in two pieces: nothing is copied); else the last chunk's rest is read line by line. Then the
   * chunk itself. Undefined: the file has ended.
   */
  #feed(chunk: Buffer | undefined): void {
    let start = 0;
    while (this.#pending) {
      const { buffer, pos, block } = this.#pending;
      this.#pending = undefined;
      const need = block.bytes - (buffer.length - pos);
      if (chunk && chunk.length >= need) {
        const head = chunk.subarray(0, need);
        if (this.#sameBlock(block, head, chunk.length === need, buffer.subarray(pos), head)) {
          this.#skipBlock(block, [buffer.subarray(pos), head]);
          start = need;
          break;
        }
      } else if (chunk) {
        // The block goes on past this chunk too (a short chunk): carry both on, copied (rare).
        this.#pending = { buffer: Buffer.concat([buffer.subarray(pos), chunk]), pos: 0, block };
        return;
      }
      // Not that block: the rest of the last chunk, line by line (which may leave another block pending).
      this.#tryBlock = false;
      this.#run(buffer, pos, chunk === undefined);
    }
    if (chunk) this.#run(chunk, start, false);
  }

  /** Whether these bytes (`pieces`, ending with `tail`) are the old block, byte for byte: same length, a whole line at the end, the same hash. */
  #sameBlock(block: OldBlock, tail: Buffer, atEnd: boolean, ...pieces: Buffer[]): boolean {
    // A block whose line lost to a later line of its id is looked at line by line.
    if (block.lines !== block.entries) return false;
    if (tail.length > 0 && tail[tail.length - 1] !== NEWLINE && !atEnd) return false;
    return sameBytes(blockDigest(...pieces), 0, block.hash, 0, BLOCK_HASH_BYTES);
  }

  /** The lines of `buffer` from `pos`: whole old blocks skipped where they come next, the rest line by line. `eof`: nothing follows. */
  #run(buffer: Buffer, pos: number, eof: boolean): void {
    while (pos < buffer.length) {
      if (this.#tryBlock) {
        const block = this.#alignedBlock();
        if (block) {
          const end = pos + block.bytes;
          if (end > buffer.length && !eof) {
            // The block may go on in the next chunk: checked when it comes.
            this.#closeOpen(buffer);
            this.#pending = { buffer, pos, block };
            return;
          }
          if (end <= buffer.length) {
            const bytes = buffer.subarray(pos, end);
            if (this.#sameBlock(block, bytes, end === buffer.length && eof, bytes)) {
              this.#closeOpen(buffer);
              this.#skipBlock(block, [bytes]);
              pos = end;
              continue;
            }
          }
        }
        this.#tryBlock = false;
      }
      pos = this.#line(buffer, pos);
    }
    this.#closeOpen(buffer);
  }

  /** The old block at the cursor when the cursor is at its start. */
  #alignedBlock(): OldBlock | undefined {
    if (this.#offset !== 0) return undefined;
    this.#load(this.#at + 1);
    return this.#blocks[this.#at];
  }

  /** Reads old blocks until #blocks holds `count` of them or entries up to `entry`. */
  #load(count: number, entry = -1): void {
    while (!this.#readerDone) {
      const last = this.#blocks.at(-1);
      if (this.#blocks.length >= count && (last === undefined || last.first + last.entries > entry)) return;
      const next = this.#reader.next();
      if (!next) {
        this.#readerDone = true;
        return;
      }
      this.#blocks.push({ ...next, hash: Buffer.from(next.hash), data: Buffer.from(next.data) });
    }
  }

  /** A whole old block found unchanged: its lines skipped (or sent, where their id was sent before), the block kept as it was. */
  #skipBlock(block: OldBlock, pieces: Buffer[]): void {
    let resend: number[] | undefined;
    for (let i = 0; i < block.entries; i++) {
      const entry = block.first + i;
      this.#matched[entry >>> 3]! |= 1 << (entry & 7);
      if (this.#bloom.has(block.data, i * ENTRY_BYTES + LINE_HASH_BYTES)) (resend ??= []).push(i);
    }
    const firstLine = this.counts.lines + 1;
    this.counts.lines += block.rawLines;
    this.counts.blankLines += block.rawLines - block.lines;
    this.counts.unchanged += block.entries;
    this.counts.blockLines += block.entries;
    if (resend) this.#resend(block, resend, pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces), firstLine);
    this.#writer?.block(block);
    this.#at += 1;
    this.#offset = 0;
    this.#dropBehind();
  }

  /** Sends the lines of a skipped block whose ids were sent before (found by their hash). */
  #resend(block: OldBlock, indices: number[], bytes: Buffer, firstLine: number): void {
    const wanted = new Map(indices.map((i) => [block.data.subarray(i * ENTRY_BYTES, i * ENTRY_BYTES + LINE_HASH_BYTES).toString('hex'), i]));
    let start = 0;
    let line = firstLine;
    while (start < bytes.length && wanted.size > 0) {
      let end = bytes.indexOf(NEWLINE, start);
      if (end === -1) end = bytes.length;
      const content = contentOf(bytes, start, end);
      const digest = lineDigest(content);
      const key = digest.toString('hex');
      if (wanted.has(key)) {
        wanted.delete(key);
        this.counts.unchanged -= 1;
        this.#forced += 1;
        this.#sendLine(content, line, digest);
      }
      start = end + 1;
      line += 1;
    }
  }

  /** One line at `pos`, hashed and looked up; returns where the next line starts. */
  #line(buffer: Buffer, pos: number): number {
    let newline = buffer.indexOf(NEWLINE, pos);
    const end = newline === -1 ? buffer.length : newline + 1;
    if (newline === -1) newline = buffer.length;
    const content = contentOf(buffer, pos, newline);
    const digest = lineDigest(content);
    this.counts.lines += 1;
    const line = this.counts.lines;
    const open = (this.#open ??= { start: pos, end: pos, rawLines: 0, lines: 0, entries: [] });
    open.rawLines += 1;
    open.end = end;
    const found = this.#find(digest);
    if (found) {
      const { block, index } = found;
      const entry = block.first + index;
      this.#matched[entry >>> 3]! |= 1 << (entry & 7);
      const data = block.data.subarray(index * ENTRY_BYTES, (index + 1) * ENTRY_BYTES);
      open.lines += 1;
      open.entries.push(data);
      if (this.#bloom.has(data, LINE_HASH_BYTES)) {
        this.#forced += 1;
        this.#sendLine(content, line, digest);
      } else this.counts.unchanged += 1;
      // Past the old block's last line: the next line may start the next old block.
      this.#tryBlock = this.#offset === 0;
    } else {
      const idHash = this.#sendLine(content, line, digest);
      if (idHash !== undefined) {
        open.lines += 1;
        const entry = Buffer.allocUnsafe(ENTRY_BYTES);
        digest.copy(entry, 0, 0, LINE_HASH_BYTES);
        idHash.copy(entry, LINE_HASH_BYTES);
        open.entries.push(entry);
      }
    }
    if (open.rawLines === BLOCK_LINES || open.end - open.start >= BLOCK_MAX_BYTES) this.#closeOpen(buffer);
    return end;
  }

  /** Sends a line; returns its id hash (undefined for a blank line). */
  #sendLine(content: Buffer, line: number, digest: Buffer): Buffer | undefined {
    if (!isUtf8(content)) throw new LoadError('not valid UTF-8', { file: this.#name, line });
    const id = this.#send({ text: content.toString('utf8'), bytes: content, line, digest });
    if (id === undefined) {
      this.counts.blankLines += 1;
      return undefined;
    }
    this.counts.sent += 1;
    const hash = idDigest(id);
    this.#bloom.add(hash);
    if (this.#sentCount === this.#sentIds.length) {
      const grown = new BigUint64Array(this.#sentIds.length * 2);
      grown.set(this.#sentIds);
      this.#sentIds = grown;
    }
    this.#sentIds[this.#sentCount++] = hash.readBigUInt64LE(0);
    return hash;
  }

  /** The old line with this hash at or after the cursor, within the window; moves the cursor past it. */
  #find(digest: Buffer): { block: OldBlock; index: number } | undefined {
    // At the cursor: the common case once aligned.
    this.#load(this.#at + 1);
    const here = this.#blocks[this.#at];
    if (here && this.#offset < here.entries && sameBytes(here.data, this.#offset * ENTRY_BYTES, digest, 0, LINE_HASH_BYTES)) return this.#moveTo(this.#at, this.#offset);
    const cursor = here ? here.first + this.#offset : this.#header.entries;
    if (cursor >= this.#header.entries) return undefined;
    if (!this.#table || cursor < this.#tableFrom || cursor >= this.#tableFrom + WINDOW / 2) this.#buildTable(cursor);
    const table = this.#table!;
    const mask = table.length - 1;
    for (let slot = readU32(digest, 0) & mask; ; slot = (slot + 1) & mask) {
      const value = table[slot]!;
      if (value === 0) return undefined;
      const entry = value - 1;
      if (entry < cursor) continue;
      const at = this.#blockOf(entry);
      const block = this.#blocks[at]!;
      const index = entry - block.first;
      if (sameBytes(block.data, index * ENTRY_BYTES, digest, 0, LINE_HASH_BYTES)) return this.#moveTo(at, index);
    }
  }

  #moveTo(at: number, index: number): { block: OldBlock; index: number } {
    const block = this.#blocks[at]!;
    this.#at = at;
    this.#offset = index + 1;
    if (this.#offset >= block.entries) {
      this.#at += 1;
      this.#offset = 0;
    }
    this.#dropBehind();
    return { block, index };
  }

  /** The hash table over the old lines [from, from + WINDOW). */
  #buildTable(from: number): void {
    this.#load(0, from + WINDOW - 1);
    const size = WINDOW * 2;
    const table = this.#table?.fill(0) ?? new Uint32Array(size);
    const mask = size - 1;
    let to = from;
    for (let at = this.#blockOf(from); at < this.#blocks.length; at++) {
      const block = this.#blocks[at]!;
      for (let i = Math.max(0, from - block.first); i < block.entries && to < from + WINDOW; i++) {
        const entry = block.first + i;
        let slot = readU32(block.data, i * ENTRY_BYTES) & mask;
        while (table[slot] !== 0) slot = (slot + 1) & mask;
        table[slot] = entry + 1;
        to = entry + 1;
      }
    }
    this.#table = table;
    this.#tableFrom = from;
  }

  /** Index in #blocks of the block holding this entry (it is loaded). */
  #blockOf(entry: number): number {
    let low = 0;
    let high = this.#blocks.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >>> 1;
      if (this.#blocks[mid]!.first <= entry) low = mid;
      else high = mid - 1;
    }
    // Blocks without entries share their `first` with the next: take the one that holds it.
    while (low < this.#blocks.length - 1 && this.#blocks[low]!.entries === 0) low += 1;
    return low;
  }

  /** Forgets old blocks the cursor and the table have both passed. */
  #dropBehind(): void {
    const keepFrom = this.#table ? Math.min(this.#at, this.#blockOfLoaded(this.#tableFrom)) : this.#at;
    if (keepFrom > 1024) {
      this.#blocks = this.#blocks.slice(keepFrom);
      this.#at -= keepFrom;
    }
  }

  #blockOfLoaded(entry: number): number {
    return this.#blocks.length && this.#blocks[0]!.first <= entry ? this.#blockOf(entry) : 0;
  }

  /** Writes the new index's block gathered line by line, if any. */
  #closeOpen(buffer: Buffer): void {
    const open = this.#open;
    if (!open) return;
    this.#open = undefined;
    const data = Buffer.concat(open.entries);
    const block: Block = { rawLines: open.rawLines, lines: open.lines, entries: open.entries.length, bytes: open.end - open.start, hash: blockDigest(buffer.subarray(open.start, open.end)), data };
    this.#writer?.block(block);
  }

  /**
   * After `end`: one pass over the old line index — which old rows left the file (not matched,
   * their id not sent), how many changed, and the distinct ids of the new file.
   */
  finish(): MatchEnd {
    const sent = this.#sentIds.subarray(0, this.#sentCount).sort();
    let distinctSent = 0;
    for (let i = 0; i < sent.length; i++) if (i === 0 || sent[i] !== sent[i - 1]) distinctSent += 1;
    const isSent = (data: Buffer, at: number) => {
      if (!this.#bloom.has(data, at)) return false;
      const target = data.readBigUInt64LE(at);
      let low = 0;
      let high = sent.length - 1;
      while (low <= high) {
        const mid = (low + high) >>> 1;
        if (sent[mid] === target) return true;
        if (sent[mid]! < target) low = mid + 1;
        else high = mid - 1;
      }
      return false;
    };
    const reader = new BlockReader(this.#file, this.#header);
    const removed: Buffer[] = [];
    let matched = 0;
    let overlap = 0;
    let changed = 0;
    const changedLines: Buffer[] = [];
    try {
      for (let block = reader.next(); block; block = reader.next()) {
        for (let i = 0; i < block.entries; i++) {
          const entry = block.first + i;
          const at = i * ENTRY_BYTES;
          const inSent = isSent(block.data, at + LINE_HASH_BYTES);
          if (this.#matched[entry >>> 3]! & (1 << (entry & 7))) {
            matched += 1;
            if (inSent) {
              // Skipped here, but a later line of its id was sent: that line is its row now.
              overlap += 1;
              changedLines.push(Buffer.from(block.data.subarray(at, at + LINE_HASH_BYTES)));
            }
          } else if (inSent) {
            changed += 1;
            changedLines.push(Buffer.from(block.data.subarray(at, at + LINE_HASH_BYTES)));
          } else removed.push(Buffer.from(block.data.subarray(at, at + LINE_HASH_BYTES)));
        }
      }
    } finally {
      reader.close();
    }
    return { removed, documents: matched + distinctSent - overlap, changed, changedLines };
  }
}

/** A line's content: without its `\n` and a `\r` before it. */
function contentOf(buffer: Buffer, start: number, newline: number): Buffer {
  const end = newline > start && buffer[newline - 1] === CR ? newline - 1 : newline;
  return buffer.subarray(start, end);
}
