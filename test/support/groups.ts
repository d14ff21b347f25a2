/** Groups as the README documents them, counted from bundle rows: the expectation of every `group_by` test. */
import { byteCompare } from './expect.ts';

export type Key = string | number | boolean | null;

/** Groups as documented: count descending, then key ascending (null last), at most `limit`. */
export function groupsOf<T>(rows: T[], keyOf: (row: T) => Key | undefined, includeUnknown = false, limit = 200): { key: Key; count: number }[] {
  const counts = new Map<Key, number>();
  for (const row of rows) {
    const key = keyOf(row) ?? null;
    if (key === null && !includeUnknown) continue;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const order = (a: Key, c: Key) => (a === c ? 0 : a === null ? 1 : c === null ? -1 : typeof a === 'string' ? byteCompare(a, c as string) : a < c ? -1 : 1);
  return [...counts]
    .map(([key, count]) => ({ key, count }))
    .sort((x, y) => y.count - x.count || order(x.key, y.key))
    .slice(0, limit);
}
