/**
 * A next export's rows for tests of what becomes visible: a transform for the generator's
 * next-export writer that puts 12 new rows on top of a timeline file, and one that arrives late
 * (older than every row of the file), ids tagged so that each load's new rows are told apart.
 */
import type { BundleRow } from './read-bundle.ts';

export function withNewRows(tag: string) {
  return async function* (rows: AsyncIterable<BundleRow>): AsyncGenerator<BundleRow> {
    const all: BundleRow[] = [];
    for await (const row of rows) all.push(row);
    const newest = Date.parse(all[0]!.occurredAt);
    for (let i = 12; i > 0; i -= 1) yield { ...all[i]!, id: `${all[i]!.id}:${tag}`, occurredAt: new Date(newest + i * 1000).toISOString() };
    yield* all;
    const oldest = all.at(-1)!;
    yield { ...oldest, id: `${oldest.id}:${tag}-late`, occurredAt: new Date(Date.parse(oldest.occurredAt) - 3_600_000).toISOString() };
  };
}
