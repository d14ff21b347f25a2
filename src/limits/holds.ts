/**
 * What each client holds at once across the whole gateway — its downloads in flight, its open
 * streams — so that a client's caps are the gateway's, not each worker's (with n workers a
 * per-worker count would allow n times the cap). One process counts in itself (`localHolds`);
 * with workers the primary counts for all (src/workers/holds.ts).
 *
 * Open connections stay counted per worker (src/http/connection-cap.ts): that cap acts when a
 * connection is accepted, before any byte is read, where no round trip to the primary fits.
 */
import { Tally } from './tally.ts';

export interface Holds {
  /** Takes one `kind` for `key` unless `limit` are held already: how many it held before, or undefined when refused. */
  take(kind: string, key: string, limit: number): Promise<number | undefined>;
  /** Gives back one taken. */
  give(kind: string, key: string): void;
}

/** The key of one kind held by one client in a tally. */
export const holdKey = (kind: string, key: string) => `${kind}\u0000${key}`;

/** The rule of taking, wherever the counts live. */
export function takeFrom(tally: Tally, kind: string, key: string, limit: number): number | undefined {
  const held = tally.of(holdKey(kind, key));
  if (held >= limit) return undefined;
  tally.add(holdKey(kind, key));
  return held;
}

/** Counts in this process (one process, or tests). */
export function localHolds(): Holds {
  const tally = new Tally();
  return {
    take: async (kind, key, limit) => takeFrom(tally, kind, key, limit),
    give: (kind, key) => tally.remove(holdKey(kind, key)),
  };
}
