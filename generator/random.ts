/**
 * Seeded pseudo-random numbers for the bundle generator.
 *
 * Every draw comes from a `Random` keyed by the bundle seed plus labels
 * (`createRandom(seed, 'entity-name', 42)`), so any value can be recomputed on its own, in any
 * order, and the same seed always yields the same bytes. Deliberately not cryptographic: speed
 * matters at a million rows, unpredictability does not. No `Math.random`, no clock.
 */

const BYTE_HEX = Array.from({ length: 256 }, (_, n) => n.toString(16).padStart(2, '0'));
const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function mix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A 32-bit hash of the seed and labels; the same inputs always give the same number. */
export function hashOf(seed: number, ...labels: readonly (string | number)[]): number {
  let h = mix32(Math.imul(seed | 0, 0x9e3779b1) ^ 0x5bd1e995 ^ Math.floor(seed / 0x100000000));
  for (const label of labels) {
    if (typeof label === 'number') {
      h = mix32(h ^ mix32(label + 0x632be5ab) ^ Math.floor(label / 0x100000000));
    } else {
      for (let i = 0; i < label.length; i += 1) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193);
      h = mix32(h ^ label.length);
    }
  }
  return h;
}

/** A mulberry32 stream with the helpers the generator needs. */
export class Random {
  #state: number;

  constructor(state: number) {
    this.#state = state | 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) | 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Integer in [min, max]. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(items.length)]!;
  }

  /** One value, drawn with the given relative weights. */
  weighted<T>(entries: readonly (readonly [T, number])[]): T {
    let total = 0;
    for (const [, weight] of entries) total += weight;
    let roll = this.next() * total;
    for (const [value, weight] of entries) {
      roll -= weight;
      if (roll < 0) return value;
    }
    return entries[entries.length - 1]![0];
  }

  /** 32 random bits as an unsigned integer. */
  u32(): number {
    return Math.floor(this.next() * 4294967296) >>> 0;
  }

  /** `length` lowercase hex digits (eight per draw: ids are long and numerous). */
  hex(length: number): string {
    let out = '';
    while (out.length < length) {
      const bits = this.u32();
      out += BYTE_HEX[bits >>> 24]! + BYTE_HEX[(bits >>> 16) & 255]! + BYTE_HEX[(bits >>> 8) & 255]! + BYTE_HEX[bits & 255]!;
    }
    return out.length === length ? out : out.slice(0, length);
  }

  /** `length` base58 characters (the alphabet of transaction digests), five per draw. */
  base58(length: number): string {
    let out = '';
    while (out.length < length) {
      let bits = this.u32();
      for (let i = 0; i < 5; i += 1) {
        out += BASE58[bits % 58];
        bits = Math.floor(bits / 58);
      }
    }
    return out.slice(0, length);
  }

  /** Fisher–Yates, in place. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i -= 1) {
      const j = this.int(i + 1);
      const tmp = items[i]!;
      items[i] = items[j]!;
      items[j] = tmp;
    }
    return items;
  }
}

/** A stream keyed by the seed and labels. */
export function createRandom(seed: number, ...labels: readonly (string | number)[]): Random {
  return new Random(hashOf(seed, ...labels));
}
