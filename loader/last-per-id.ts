/**
 * A line index keeps one entry per id: the line that won (the last of its id in the file, whose
 * document the index holds). A load writes an entry for every line it reads, so where a file
 * repeats an id — the index then holds fewer documents than the file has lines — the losing
 * entries are dropped afterwards, here.
 *
 * Which ids repeat is found with bounded memory whatever the size: the id hashes are spread over
 * partition files by their first byte, so that each partition sorts in memory (PARTITION_IDS at
 * most on average). Then one pass finds the last line of each repeated id, and one rewrites
 * the index without the others. A block that lost an entry keeps its bytes and lines: it is
 * never skipped whole again (line-match.ts), its lines are looked up one by one.
 */
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { BlockReader, ENTRY_BYTES, LINE_HASH_BYTES, type LineIndexHeader, LineIndexWriter } from './line-index.ts';

/** Id hashes a partition holds on average: 8 MB of them sorted at once. */
const PARTITION_IDS = 1 << 20;

/** The id hashes that occur more than once among the entries. */
function repeatedIds(file: string, header: LineIndexHeader): Set<bigint> {
  const partitions = 2 ** Math.min(8, Math.ceil(Math.log2(Math.max(1, header.entries / PARTITION_IDS))));
  const shift = 8 - Math.log2(partitions);
  const parts = Array.from({ length: partitions }, (_, i) => `${file}.part-${i}.tmp`);
  const fds = parts.map((part) => openSync(part, 'w'));
  const pending = parts.map(() => Buffer.allocUnsafe(64 * 1024));
  const used = parts.map(() => 0);
  const flush = (p: number) => {
    let at = 0;
    while (at < used[p]!) at += writeSync(fds[p]!, pending[p]!, at, used[p]! - at);
    used[p] = 0;
  };
  const repeated = new Set<bigint>();
  try {
    const reader = new BlockReader(file, header);
    try {
      for (let block = reader.next(); block; block = reader.next()) {
        for (let i = 0; i < block.entries; i++) {
          const at = i * ENTRY_BYTES + LINE_HASH_BYTES;
          const p = block.data[at]! >>> shift;
          block.data.copy(pending[p]!, used[p]!, at, at + 8);
          used[p]! += 8;
          if (used[p] === pending[p]!.length) flush(p);
        }
      }
    } finally {
      reader.close();
    }
    for (let p = 0; p < partitions; p++) {
      flush(p);
      closeSync(fds[p]!);
      fds[p] = -1;
      const fd = openSync(parts[p]!, 'r');
      try {
        const bytes = Buffer.alloc(fstatSync(fd).size);
        let at = 0;
        while (at < bytes.length) at += readSync(fd, bytes, at, bytes.length - at, at);
        const ids = new BigUint64Array(bytes.length / 8);
        for (let i = 0; i < ids.length; i++) ids[i] = bytes.readBigUInt64LE(i * 8);
        ids.sort();
        for (let i = 1; i < ids.length; i++) if (ids[i] === ids[i - 1]) repeated.add(ids[i]!);
      } finally {
        closeSync(fd);
      }
    }
  } finally {
    for (const fd of fds) if (fd >= 0) closeSync(fd);
  }
  return repeated;
}

/** Rewrites the line index with only the last entry of each id; returns its new header. */
export async function keepLastPerId(file: string, header: LineIndexHeader): Promise<LineIndexHeader> {
  const repeated = repeatedIds(file, header);
  await Promise.all(Array.from({ length: 256 }, (_, i) => rm(`${file}.part-${i}.tmp`, { force: true })));
  if (repeated.size === 0) return header;
  // The last entry of each repeated id, by its position among the entries.
  const last = new Map<bigint, number>();
  const reader = new BlockReader(file, header);
  try {
    for (let block = reader.next(); block; block = reader.next()) {
      for (let i = 0; i < block.entries; i++) {
        const id = block.data.readBigUInt64LE(i * ENTRY_BYTES + LINE_HASH_BYTES);
        if (repeated.has(id)) last.set(id, block.first + i);
      }
    }
  } finally {
    reader.close();
  }
  const writer = new LineIndexWriter(file);
  const again = new BlockReader(file, header);
  try {
    for (let block = again.next(); block; block = again.next()) {
      const kept: Uint8Array[] = [];
      for (let i = 0; i < block.entries; i++) {
        const id = block.data.readBigUInt64LE(i * ENTRY_BYTES + LINE_HASH_BYTES);
        if (!repeated.has(id) || last.get(id) === block.first + i) kept.push(block.data.subarray(i * ENTRY_BYTES, (i + 1) * ENTRY_BYTES));
      }
      writer.block({ ...block, entries: kept.length, data: Buffer.concat(kept) });
    }
  } catch (error) {
    await writer.discard();
    throw error;
  } finally {
    again.close();
  }
  return writer.close({ index: header.index, key: header.key });
}
