/**
 * The ids of a file as an update by lookup reads it (loader/update-by-lookup.ts), in little memory:
 *
 * - every id as a 64-bit hash in a growing typed array, sorted once the file is read: how many
 *   distinct ids the file has, and whether a document's id is among them (the sweep of rows that
 *   left) — 8 bytes a row, where a `Set` of the id strings takes ~90 (60 MB for 660 k events);
 * - a Bloom filter of the ids read so far (16 bits a row, 0.05 % false positives): whether an id
 *   may have come before in the file. A repeated id must never be skipped as unchanged, or an
 *   earlier line of it could outlive the last (load-file.ts); a false positive only sends one
 *   unchanged row again.
 *
 * Two different ids share a 64-bit hash with odds of about n² / 2⁶⁵: 1 in 10⁷ for 10 M rows.
 */
import { createHash } from 'node:crypto';

const BLOOM_BITS_PER_ID = 16;
const BLOOM_PROBES = 11;

export class IdSet {
  #hashes = new BigUint64Array(1024);
  #length = 0;
  #sorted = true;
  readonly #bloom: Uint32Array;
  readonly #bloomBits: number;

  /** @param expected rows the file has (its manifest rowCount): sizes the Bloom filter */
  constructor(expected = 1024) {
    this.#bloomBits = Math.max(1024, expected * BLOOM_BITS_PER_ID);
    this.#bloom = new Uint32Array(Math.ceil(this.#bloomBits / 32));
  }

  /** Adds an id; answers whether it may have been added before (never false when it was). */
  add(id: string): boolean {
    const digest = createHash('sha1').update(id).digest();
    if (this.#length === this.#hashes.length) {
      const grown = new BigUint64Array(this.#hashes.length * 2);
      grown.set(this.#hashes);
      this.#hashes = grown;
    }
    this.#hashes[this.#length++] = digest.readBigUInt64LE(0);
    this.#sorted = false;
    // Double hashing over the digest's other bits: probe i is a + i·b.
    const a = digest.readUInt32LE(8);
    // `| 1` gives a signed 32-bit number: back to unsigned, or probes go negative and miss.
    const b = (digest.readUInt32LE(12) | 1) >>> 0;
    let seen = true;
    for (let i = 0; i < BLOOM_PROBES; i++) {
      const bit = (a + i * b) % this.#bloomBits;
      const word = bit >>> 5;
      const mask = 1 << (bit & 31);
      if ((this.#bloom[word]! & mask) === 0) {
        seen = false;
        this.#bloom[word]! |= mask;
      }
    }
    return seen;
  }

  /** Ids added, repeats included. */
  get added(): number {
    return this.#length;
  }

  /** Sorts and drops repeats; returns the number of distinct ids. */
  seal(): number {
    if (!this.#sorted) {
      const view = this.#hashes.subarray(0, this.#length).sort();
      let distinct = 0;
      for (let i = 0; i < view.length; i++) if (i === 0 || view[i] !== view[distinct - 1]) view[distinct++] = view[i]!;
      this.#length = distinct;
      this.#sorted = true;
    }
    return this.#length;
  }

  /** Whether the file has this id (after `seal`). */
  has(id: string): boolean {
    if (!this.#sorted) throw new Error('IdSet.has before seal()');
    const target = createHash('sha1').update(id).digest().readBigUInt64LE(0);
    let low = 0;
    let high = this.#length - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const value = this.#hashes[mid]!;
      if (value === target) return true;
      if (value < target) low = mid + 1;
      else high = mid - 1;
    }
    return false;
  }
}
