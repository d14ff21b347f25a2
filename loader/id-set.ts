/**
 * The ids of a file, 8 bytes each: a 64-bit hash per id in a growing typed array, sorted once
 * read. An update (loader/update-index.ts) needs two things of them — how many distinct ids
 * the file has, and whether a document's id is among them — and a `Set` of the id strings would
 * take ~90 bytes per row (60 MB for 660 k events) where this takes 8. Two different ids share a
 * hash with odds of about n² / 2⁶⁵: 1 in 10⁷ for 10 M rows.
 */
import { createHash } from 'node:crypto';

export function idHash(id: string): bigint {
  return createHash('sha1').update(id).digest().readBigUInt64LE(0);
}

export class IdSet {
  #hashes = new BigUint64Array(1024);
  #length = 0;
  #sorted = true;

  add(id: string): void {
    if (this.#length === this.#hashes.length) {
      const grown = new BigUint64Array(this.#hashes.length * 2);
      grown.set(this.#hashes);
      this.#hashes = grown;
    }
    this.#hashes[this.#length++] = idHash(id);
    this.#sorted = false;
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

  has(id: string): boolean {
    if (!this.#sorted) throw new Error('IdSet.has before seal()');
    const target = idHash(id);
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
