/**
 * Instants (bigint nanoseconds since the epoch), Go-style RFC 3339 text, cycle windows, and
 * clocks that hand out strictly ordered timestamps for time-ordered files.
 *
 * Go's `time.Time` marshals with the fraction's trailing zeros trimmed (0–9 digits) and the
 * zone of the exporting process, so some timestamps here carry `+10:00`: their text order then
 * differs from their instant order, which is what a loader must cope with. Clocks never read the
 * wall clock.
 */
import type { Random } from './random.ts';

export const NANOS_PER_MS = 1_000_000n;
export const NANOS_PER_SECOND = 1_000_000_000n;

/** The Go zero instant, legal where a time field cannot be omitted. */
export const ZERO_TIME = '0001-01-01T00:00:00Z';

/** Parses a `Z` timestamp with up to 9 fractional digits (for constants). */
export function parseUtc(text: string): bigint {
  const m = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/.exec(text);
  if (!m) throw new Error(`not a UTC timestamp: ${text}`);
  const ms = Date.parse(`${m[1]}Z`);
  return BigInt(ms) * NANOS_PER_MS + BigInt((m[2] ?? '').padEnd(9, '0'));
}

/** Cycle 5 starts here; earlier instants are uncycled. */
export const CYCLE5_START = parseUtc('2026-03-11T09:00:00Z');
/** Cycle 6 (the current cycle) starts here. */
export const CYCLE6_START = parseUtc('2026-06-25T09:00:00Z');
/** The oldest instant the generator writes for ordinary rows. */
export const EARLIEST = parseUtc('2026-01-05T00:00:00Z');

/** The cycle an instant falls in, or undefined before cycle 5. */
export function cycleOf(ns: bigint): number | undefined {
  if (ns >= CYCLE6_START) return 6;
  if (ns >= CYCLE5_START) return 5;
  return undefined;
}

/** Go RFC3339Nano text: trailing fraction zeros trimmed; `Z` or the given offset in minutes. */
export function formatTime(ns: bigint, offsetMinutes = 0): string {
  const fraction = Number(ns % NANOS_PER_SECOND);
  const seconds = Number(ns / NANOS_PER_SECOND) + offsetMinutes * 60;
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  const digits = fraction === 0 ? '' : `.${String(fraction).padStart(9, '0').replace(/0+$/, '')}`;
  if (offsetMinutes === 0) return `${base}${digits}Z`;
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const zone = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return `${base}${digits}${zone}`;
}

/** The offset used for the minority of timestamps written by a process outside UTC. */
export const AUSTRALIAN_OFFSET = 600;

/** Keeps `digits` fractional digits (0–9) and drops the rest. */
export function truncate(ns: bigint, digits: number): bigint {
  const unit = 10n ** BigInt(9 - digits);
  return ns - (ns % unit);
}

/** Fraction lengths drawn for timestamps with full nanosecond precision. */
const NANO_DIGITS: readonly (readonly [number, number])[] = [
  [0, 12], [1, 6], [2, 6], [3, 18], [4, 6], [5, 6], [6, 22], [7, 6], [8, 6], [9, 12],
];
/** Fraction lengths for chain timestamps, which are milliseconds. */
const MILLI_DIGITS: readonly (readonly [number, number])[] = [[0, 20], [1, 15], [2, 15], [3, 50]];

/** Draws how many fractional digits a timestamp keeps. */
export function drawDigits(random: Random, milliseconds: boolean): number {
  return random.weighted(milliseconds ? MILLI_DIGITS : NANO_DIGITS);
}

/** How a clock spreads its instants: shares of the cycle 6 window, the cycle 5 window and before. */
export interface ClockOptions {
  count: number;
  /** Relative shares of [cycle 6 window, cycle 5 window, before cycle 5]. */
  shares: readonly [number, number, number];
  /** The newest instant the clock may return. */
  newest: bigint;
  /** True for chain timestamps (millisecond precision). */
  milliseconds: boolean;
  /** Probability that an instant exactly repeats the previous one. */
  tieRate: number;
  /** Probability that an instant is written with `+10:00`. */
  offsetRate: number;
}

/** One instant from a clock, with the offset its text uses. */
export interface Tick {
  ns: bigint;
  offsetMinutes: number;
}

/**
 * Hands out `count` instants newest first (non-increasing), spread over the three windows by
 * their shares. The last instant of the cycle 6 and cycle 5 windows is exactly the cycle's start,
 * so boundary rows always exist; ties repeat the previous instant exactly.
 */
export class DescendingClock {
  readonly #random: Random;
  readonly #options: ClockOptions;
  readonly #segments: { top: number; bottom: number; bottomNs: bigint; count: number }[];
  #segment = 0;
  #position = 0;
  #previous: bigint | undefined;

  constructor(random: Random, options: ClockOptions) {
    this.#random = random;
    this.#options = options;
    const [s6, s5, s0] = options.shares;
    const total = s6 + s5 + s0;
    const n6 = Math.round((options.count * s6) / total);
    const n5 = Math.min(options.count - n6, Math.round((options.count * s5) / total));
    const ms = (ns: bigint) => Number(ns / NANOS_PER_MS);
    this.#segments = [
      { top: ms(options.newest), bottom: ms(CYCLE6_START), bottomNs: CYCLE6_START, count: n6 },
      { top: ms(CYCLE6_START), bottom: ms(CYCLE5_START), bottomNs: CYCLE5_START, count: n5 },
      { top: ms(CYCLE5_START), bottom: ms(EARLIEST), bottomNs: EARLIEST, count: options.count - n6 - n5 },
    ];
  }

  next(): Tick {
    while (this.#segment < this.#segments.length && this.#position >= this.#segments[this.#segment]!.count) {
      this.#segment += 1;
      this.#position = 0;
    }
    const segment = this.#segments[Math.min(this.#segment, this.#segments.length - 1)]!;
    const random = this.#random;
    const last = this.#position === segment.count - 1 && this.#segment < 2;
    let ns: bigint;
    if (last) {
      ns = segment.bottomNs; // exactly the cycle start: a boundary row
    } else if (this.#previous !== undefined && random.chance(this.#options.tieRate)) {
      ns = this.#previous;
    } else {
      const step = (segment.top - segment.bottom) / Math.max(1, segment.count);
      const ms = Math.floor(segment.top - step * this.#position - random.next() * step);
      const subMs = this.#options.milliseconds ? 0 : random.int(1_000_000);
      ns = truncate(BigInt(ms) * NANOS_PER_MS + BigInt(subMs), drawDigits(random, this.#options.milliseconds));
      if (ns < segment.bottomNs) ns = segment.bottomNs + NANOS_PER_MS;
    }
    if (this.#previous !== undefined && ns > this.#previous) ns = this.#previous;
    this.#previous = ns;
    this.#position += 1;
    const offsetMinutes = !last && random.chance(this.#options.offsetRate) ? AUSTRALIAN_OFFSET : 0;
    return { ns, offsetMinutes };
  }
}
