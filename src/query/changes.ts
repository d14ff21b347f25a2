/**
 * What changed between two bundles (`/v1/changes`), as a merge join: each collection's documents
 * of the two generations are read side by side in `id` order, a batch of ids and line hashes at a
 * time; an id only `to` holds was added, one only `from` holds was removed, one both hold with
 * another line hash changed. Stateless between pages: a page ends after an id, and the next starts
 * after it in both. Pure; the route reads the batches (src/routes/changes.ts).
 */

export const CHANGE_KINDS = ['added', 'changed', 'removed'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** One document of a batch: its id and the hash of its exported line. */
export interface Line {
  id: string;
  hash: string;
}

export interface Change {
  id: string;
  change: ChangeKind;
}

/** Keyword order: Elasticsearch sorts a keyword by its UTF-8 bytes, which is not JavaScript's UTF-16 order. */
export function compareIds(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * How far two batches (each in id order, each `full` when the index may hold more after it) can
 * be compared: through the smaller last id of the full ones, since past it the full batch's next
 * ids are unknown; undefined when neither is full (both indices end in these batches).
 */
export function comparedThrough(from: readonly Line[], fromFull: boolean, to: readonly Line[], toFull: boolean): string | undefined {
  const ends = [fromFull ? from.at(-1)?.id : undefined, toFull ? to.at(-1)?.id : undefined].filter((id): id is string => id !== undefined);
  if (ends.length === 0) return undefined;
  return ends.reduce((a, b) => (compareIds(a, b) <= 0 ? a : b));
}

/** The changes between two batches in id order, among ids up to `through` (inclusive; undefined: all of them), in id order. */
export function mergeBatches(from: readonly Line[], to: readonly Line[], through: string | undefined): Change[] {
  const within = (id: string) => through === undefined || compareIds(id, through) <= 0;
  const changes: Change[] = [];
  let i = 0;
  let j = 0;
  while ((i < from.length && within(from[i]!.id)) || (j < to.length && within(to[j]!.id))) {
    const a = i < from.length && within(from[i]!.id) ? from[i] : undefined;
    const b = j < to.length && within(to[j]!.id) ? to[j] : undefined;
    const order = a && b ? compareIds(a.id, b.id) : a ? -1 : 1;
    if (order < 0) {
      changes.push({ id: a!.id, change: 'removed' });
      i += 1;
    } else if (order > 0) {
      changes.push({ id: b!.id, change: 'added' });
      j += 1;
    } else {
      if (a!.hash !== b!.hash) changes.push({ id: a!.id, change: 'changed' });
      i += 1;
      j += 1;
    }
  }
  return changes;
}
