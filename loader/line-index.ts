/**
 * A generation's line index: beside each index a load writes, what is needed to recognise its
 * lines in the next export without asking Elasticsearch — the file's lines in file order, as
 * blocks of up to BLOCK_LINES lines. A block holds the sha1 of its bytes and, per line it
 * indexed, an entry: the first 9 bytes of the line's sha1 (exactly ROW_HASH, which the
 * document carries) and 8 bytes of its id's sha1.
 *
 * File order, not hash order: the registry writes every file in an order of its rows' own
 * fields (export-format.md, high-water marks), so an unchanged line keeps its place among the
 * other unchanged ones, and the next export is compared as a merge — a run of unchanged lines
 * costs one hash of its block's bytes (loader/line-match.ts) — with memory bounded by a window,
 * whatever the file's size. A sorted file would need a random lookup per line.
 *
 * Only the line that won for its id is an entry (a file that repeats an id holds its last line:
 * `keepLastPerId`), so an entry always describes a document the index holds, byte for byte.
 *
 * On disk: HEADER_BYTES of JSON (padded) naming the index, its content key, the counts and the
 * sha256 of the body; then per block a BLOCK_HEADER_BYTES record (raw lines, entries, bytes, sha1)
 * followed by its entries. A line index is trusted only when all of that matches the generation
 * that reads the index and the body's sha256 (`openLineIndex`); anything else is a reason, and
 * the load checks every line against Elasticsearch instead.
 */
import { createHash, hash } from 'node:crypto';
import { closeSync, createReadStream, fsyncSync, openSync, readSync, writeSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';

export const FORMAT = 'registry-line-index/1';
/** Lines per block at most: a run of unchanged lines costs one hash call per block. */
export const BLOCK_LINES = 64;
/** Bytes per block at most (a block of long lines closes early): bounds what a comparison carries over a chunk. */
export const BLOCK_MAX_BYTES = 256 * 1024;
export const LINE_HASH_BYTES = 9;
export const ID_HASH_BYTES = 8;
export const ENTRY_BYTES = LINE_HASH_BYTES + ID_HASH_BYTES;
export const BLOCK_HASH_BYTES = 20;
/** rawLines, lines, entries, bytes (u32 each), then the block's sha1. */
export const BLOCK_HEADER_BYTES = 16 + BLOCK_HASH_BYTES;
export const HEADER_BYTES = 512;

/** The line's hash as its entry holds it: the first LINE_HASH_BYTES of the sha1 of its bytes (no `\n`, no `\r`). */
export function lineDigest(bytes: Uint8Array): Buffer {
  return hash('sha1', bytes, 'buffer').subarray(0, LINE_HASH_BYTES);
}

/** ROW_HASH as documents carry it (row-document.ts `lineHash`), from an entry's line hash. */
export function rowHashText(digest: Uint8Array): string {
  return Buffer.from(digest.buffer, digest.byteOffset, LINE_HASH_BYTES).toString('base64url').slice(0, 11);
}

/** An id's hash as its entry holds it. */
export function idDigest(id: string): Buffer {
  return hash('sha1', id, 'buffer').subarray(0, ID_HASH_BYTES);
}

/** The sha1 of a block's bytes. */
export function blockDigest(...pieces: Uint8Array[]): Buffer {
  if (pieces.length === 1) return hash('sha1', pieces[0]!, 'buffer');
  const h = createHash('sha1');
  for (const piece of pieces) h.update(piece);
  return h.digest();
}

/** What a line index describes: the concrete index, its content key (plan.ts) and how many documents it holds. */
export interface LineIndexIdentity {
  index: string;
  key: string;
}

export interface LineIndexHeader extends LineIndexIdentity {
  format: string;
  entries: number;
  blocks: number;
  bodyBytes: number;
  bodySha256: string;
}

/** Where the line index of a concrete index lives. */
export function lineIndexPath(dir: string, index: string): string {
  return path.join(dir, `${index}.lines`);
}

/** The folder of a prefix's line indices under DATA_DIR. */
export function lineIndexDir(dataDir: string, prefix: string): string {
  return path.join(dataDir, prefix, 'line-index');
}

/**
 * A block as written: its record and its entries (ENTRY_BYTES each). `rawLines` counts blank
 * lines too, `lines` only the others; `entries` is fewer than `lines` where a line lost to a
 * later line of its id (`keepLastPerId`): such a block is never skipped whole.
 */
export interface Block {
  rawLines: number;
  lines: number;
  entries: number;
  bytes: number;
  hash: Uint8Array;
  data: Uint8Array;
}

const WRITE_BUFFER = 1 << 20;

/**
 * Writes a line index block by block, to `<path>.tmp` until `close` checks and renames it.
 * Synchronous writes of a megabyte at a time: the loader's thread is never a server's.
 */
export class LineIndexWriter {
  readonly path: string;
  readonly #fd: number;
  readonly #body = createHash('sha256');
  #buffer = Buffer.allocUnsafe(WRITE_BUFFER);
  #used = 0;
  #position = HEADER_BYTES;
  entries = 0;
  blocks = 0;
  #closed = false;

  constructor(file: string) {
    this.path = file;
    this.#fd = openSync(`${file}.tmp`, 'w');
  }

  static async create(dir: string, index: string): Promise<LineIndexWriter> {
    await mkdir(dir, { recursive: true });
    return new LineIndexWriter(lineIndexPath(dir, index));
  }

  #put(bytes: Uint8Array): void {
    if (this.#used + bytes.length > this.#buffer.length) this.#flush();
    if (bytes.length > this.#buffer.length) {
      this.#write(bytes);
      return;
    }
    this.#buffer.set(bytes, this.#used);
    this.#used += bytes.length;
  }

  #flush(): void {
    if (this.#used === 0) return;
    this.#write(this.#buffer.subarray(0, this.#used));
    this.#used = 0;
  }

  #write(bytes: Uint8Array): void {
    this.#body.update(bytes);
    let at = 0;
    while (at < bytes.length) at += writeSync(this.#fd, bytes, at, bytes.length - at, this.#position + at);
    this.#position += bytes.length;
  }

  /** One block: its record, then its entries (`data`: `entries` × ENTRY_BYTES). */
  block(block: Block): void {
    this.#put(encodeBlocks([{ ...block, data: new Uint8Array(0) }], false));
    if (block.data.length !== block.entries * ENTRY_BYTES) throw new Error(`a block of ${block.entries} entries with ${block.data.length} bytes`);
    this.#put(block.data);
    this.entries += block.entries;
    this.blocks += 1;
  }

  /** Blocks already encoded (a parse worker's, `encodeBlocks`). */
  encoded(bytes: Uint8Array, blocks: number, entries: number): void {
    this.#put(bytes);
    this.blocks += blocks;
    this.entries += entries;
  }

  /** Writes the header and moves the file into place. */
  async close(identity: LineIndexIdentity): Promise<LineIndexHeader> {
    this.#flush();
    const header: LineIndexHeader = { format: FORMAT, ...identity, entries: this.entries, blocks: this.blocks, bodyBytes: this.#position - HEADER_BYTES, bodySha256: this.#body.digest('hex') };
    const text = Buffer.from(JSON.stringify(header));
    if (text.length >= HEADER_BYTES) throw new Error('line index header too long');
    const padded = Buffer.alloc(HEADER_BYTES, 0x20);
    text.copy(padded);
    padded[HEADER_BYTES - 1] = 0x0a;
    writeSync(this.#fd, padded, 0, HEADER_BYTES, 0);
    fsyncSync(this.#fd);
    closeSync(this.#fd);
    this.#closed = true;
    await rename(`${this.path}.tmp`, this.path);
    return header;
  }

  /** Drops what was written (a failed or abandoned load). */
  async discard(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      closeSync(this.#fd);
    }
    await rm(`${this.path}.tmp`, { force: true });
  }
}

/** Blocks encoded as a line index body holds them (a parse worker encodes its chunk's; the writer appends the bytes). */
export function encodeBlocks(blocks: readonly Block[], withEntries = true): Buffer {
  const size = blocks.reduce((n, b) => n + BLOCK_HEADER_BYTES + (withEntries ? b.data.length : 0), 0);
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const block of blocks) {
    out.writeUInt32LE(block.rawLines, at);
    out.writeUInt32LE(block.lines, at + 4);
    out.writeUInt32LE(block.entries, at + 8);
    out.writeUInt32LE(block.bytes, at + 12);
    out.set(block.hash.subarray(0, BLOCK_HASH_BYTES), at + 16);
    at += BLOCK_HEADER_BYTES;
    if (!withEntries) continue;
    out.set(block.data, at);
    at += block.data.length;
  }
  return out;
}

/**
 * Cuts the lines of a chunk into blocks (a build's: every line new). `lines` are the chunk's raw
 * lines in order, each with where it ends in the chunk (after its `\n`) and its entry, or
 * undefined for a blank line (counted, not indexed).
 */
export class BlockCutter {
  #start = 0;
  #rawLines = 0;
  #entries: Uint8Array[] = [];
  #end = 0;
  readonly out: Block[] = [];
  readonly chunk: Uint8Array;

  constructor(chunk: Uint8Array) {
    this.chunk = chunk;
  }

  line(end: number, entry: Uint8Array | undefined): void {
    this.#rawLines += 1;
    if (entry) this.#entries.push(entry);
    this.#end = end;
    if (this.#rawLines === BLOCK_LINES || this.#end - this.#start >= BLOCK_MAX_BYTES) this.cut();
  }

  /** Closes the open block (at the chunk's end: a build's blocks never straddle chunks). */
  cut(): void {
    if (this.#rawLines === 0) return;
    const data = Buffer.allocUnsafe(this.#entries.length * ENTRY_BYTES);
    this.#entries.forEach((entry, i) => data.set(entry, i * ENTRY_BYTES));
    const bytes = this.chunk.subarray(this.#start, this.#end);
    this.out.push({ rawLines: this.#rawLines, lines: this.#entries.length, entries: this.#entries.length, bytes: bytes.length, hash: blockDigest(bytes), data });
    this.#start = this.#end;
    this.#rawLines = 0;
    this.#entries = [];
  }
}

/** An entry: a line's hash and its id's. */
export function entryOf(lineHash: Uint8Array, id: string): Buffer {
  const entry = Buffer.allocUnsafe(ENTRY_BYTES);
  entry.set(lineHash.subarray(0, LINE_HASH_BYTES), 0);
  entry.set(idDigest(id), LINE_HASH_BYTES);
  return entry;
}

/** Reads a line index's header, or says why it cannot be read. */
function readHeader(fd: number): LineIndexHeader | string {
  const head = Buffer.alloc(HEADER_BYTES);
  const read = readSync(fd, head, 0, HEADER_BYTES, 0);
  if (read < HEADER_BYTES) return 'shorter than its header';
  try {
    const header = JSON.parse(head.toString('utf8').trimEnd()) as LineIndexHeader;
    if (header.format !== FORMAT) return `format ${String(header.format)}, not ${FORMAT}`;
    return header;
  } catch {
    return 'its header is not JSON';
  }
}

/**
 * A line index the next load may trust: its header names `expected` (the concrete index the
 * live generation reads, with its content key) and `documents` entries, its body has the size
 * and the sha256 the header says, and its blocks add up. Returns the header, or a reason.
 */
export async function openLineIndex(file: string, expected: LineIndexIdentity, documents: number): Promise<{ header: LineIndexHeader; file: string } | { reason: string }> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch {
    return { reason: 'none kept' };
  }
  const fd = openSync(file, 'r');
  let header: LineIndexHeader | string;
  try {
    header = readHeader(fd);
  } finally {
    closeSync(fd);
  }
  if (typeof header === 'string') return { reason: header };
  if (header.index !== expected.index) return { reason: `it describes ${header.index}` };
  if (header.key !== expected.key) return { reason: 'it was written for other content' };
  if (header.entries !== documents) return { reason: `${header.entries} entries for ${documents} documents` };
  if (size !== HEADER_BYTES + header.bodyBytes) return { reason: `${size} bytes where its header says ${HEADER_BYTES + header.bodyBytes}` };
  // The whole body: its sha256, and blocks whose entries add up to the header's.
  const body = createHash('sha256');
  let entries = 0;
  let blocks = 0;
  let skip = 0;
  let pending = Buffer.alloc(0);
  for await (const piece of createReadStream(file, { start: HEADER_BYTES, highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    body.update(piece);
    let at = 0;
    let bytes = piece;
    if (pending.length) {
      bytes = Buffer.concat([pending, piece]);
      pending = Buffer.alloc(0);
    }
    while (at < bytes.length) {
      if (skip > 0) {
        const step = Math.min(skip, bytes.length - at);
        skip -= step;
        at += step;
        continue;
      }
      if (bytes.length - at < BLOCK_HEADER_BYTES) {
        pending = Buffer.from(bytes.subarray(at));
        break;
      }
      const count = bytes.readUInt32LE(at + 8);
      if (count > bytes.readUInt32LE(at + 4) || bytes.readUInt32LE(at + 4) > bytes.readUInt32LE(at)) return { reason: `block ${blocks} holds more entries than lines` };
      entries += count;
      blocks += 1;
      skip = count * ENTRY_BYTES;
      at += BLOCK_HEADER_BYTES;
    }
  }
  if (pending.length || skip > 0) return { reason: 'its last block is cut short' };
  if (body.digest('hex') !== header.bodySha256) return { reason: 'its sha256 does not match (damaged)' };
  if (entries !== header.entries || blocks !== header.blocks) return { reason: `its blocks hold ${entries} entries in ${blocks} blocks, its header says ${header.entries} in ${header.blocks}` };
  return { header, file };
}

/**
 * Reads a line index's blocks in order, from the start (synchronous reads of a file the plan
 * just read whole: it is in the page cache). `next` gives undefined after the last block.
 */
export class BlockReader {
  readonly #fd: number;
  #position = HEADER_BYTES;
  readonly #end: number;
  #buffer = Buffer.alloc(0);
  #at = 0;
  /** Global index of the next block's first entry. */
  entry = 0;

  constructor(file: string, header: Pick<LineIndexHeader, 'bodyBytes'>) {
    this.#fd = openSync(file, 'r');
    this.#end = HEADER_BYTES + header.bodyBytes;
  }

  #ensure(bytes: number): boolean {
    if (this.#buffer.length - this.#at >= bytes) return true;
    const rest = this.#buffer.subarray(this.#at);
    const want = Math.max(bytes, 1 << 20);
    const next = Buffer.allocUnsafe(rest.length + Math.min(want, this.#end - this.#position));
    rest.copy(next);
    let filled = rest.length;
    while (filled < next.length) {
      const read = readSync(this.#fd, next, filled, next.length - filled, this.#position);
      if (read === 0) break;
      filled += read;
      this.#position += read;
    }
    this.#buffer = next.subarray(0, filled);
    this.#at = 0;
    return this.#buffer.length >= bytes;
  }

  /** The next block, its hash and entries views (valid until the reader reads again: copy what is kept). */
  next(): (Block & { first: number; hash: Buffer; data: Buffer }) | undefined {
    if (!this.#ensure(BLOCK_HEADER_BYTES)) return undefined;
    const entries = this.#buffer.readUInt32LE(this.#at + 8);
    if (!this.#ensure(BLOCK_HEADER_BYTES + entries * ENTRY_BYTES)) throw new Error('a line index block is cut short');
    // #ensure may have moved the bytes: read the record from where they are now.
    const b = this.#buffer;
    const start = this.#at;
    const block = {
      rawLines: b.readUInt32LE(start),
      lines: b.readUInt32LE(start + 4),
      entries,
      bytes: b.readUInt32LE(start + 12),
      hash: b.subarray(start + 16, start + BLOCK_HEADER_BYTES),
      data: b.subarray(start + BLOCK_HEADER_BYTES, start + BLOCK_HEADER_BYTES + entries * ENTRY_BYTES),
      first: this.entry,
    };
    this.#at = start + BLOCK_HEADER_BYTES + entries * ENTRY_BYTES;
    this.entry += entries;
    return block;
  }

  close(): void {
    closeSync(this.#fd);
  }
}

/** Deletes the line indices (and unfinished ones) of indices not in `keep`. */
export async function pruneLineIndices(dir: string, keep: ReadonlySet<string>): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const index = name.replace(/\.lines(\.tmp)?$/, '');
    if (name.endsWith('.tmp') || !keep.has(index)) await rm(path.join(dir, name), { force: true });
  }
}
