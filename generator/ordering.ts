/**
 * Orders time-keyed row streams the way the registry's SQL does (`time DESC, id DESC` or
 * `time ASC, id ASC`) without holding a file in memory: producers already emit rows in time
 * order, so only runs of equal instants need sorting (by id), and several producers are merged
 * by comparing their heads.
 */
import { compareBytes } from './go-json.ts';

/** A row with the instant and id it is ordered by. */
export interface Timed<T> {
  ns: bigint;
  id: string;
  row: T;
}

/** Sorts each run of equal instants by id (descending or ascending); rows must arrive time-ordered. */
export function* sortTies<T>(rows: Iterable<Timed<T>>, direction: 'desc' | 'asc'): Generator<Timed<T>> {
  let run: Timed<T>[] = [];
  const flush = function* () {
    if (run.length > 1) run.sort((a, b) => (direction === 'desc' ? compareBytes(b.id, a.id) : compareBytes(a.id, b.id)));
    yield* run;
    run = [];
  };
  for (const row of rows) {
    if (run.length > 0 && run[0]!.ns !== row.ns) yield* flush();
    run.push(row);
  }
  yield* flush();
}

/** Merges streams already in `time DESC, id DESC` order into one such stream. */
export function* mergeDescending<T>(streams: readonly Iterable<Timed<T>>[]): Generator<Timed<T>> {
  const iterators = streams.map((stream) => stream[Symbol.iterator]());
  const heads: (Timed<T> | undefined)[] = iterators.map((iterator) => {
    const next = iterator.next();
    return next.done ? undefined : next.value;
  });
  for (;;) {
    let best = -1;
    for (let n = 0; n < heads.length; n += 1) {
      const head = heads[n];
      if (head === undefined) continue;
      const current = best >= 0 ? heads[best]! : undefined;
      if (current === undefined || head.ns > current.ns || (head.ns === current.ns && compareBytes(head.id, current.id) > 0)) best = n;
    }
    if (best < 0) return;
    yield heads[best]!;
    const next = iterators[best]!.next();
    heads[best] = next.done ? undefined : next.value;
  }
}
