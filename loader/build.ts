/**
 * A build: a new index created with the plan's shards and every line of the file written into
 * it — on the parse pool's workers when the load has them and the description reads no other
 * index per batch (`prepare`), else on the loader's thread.
 */
import { createIndex } from './generations.ts';
import { loadFile } from './load-file.ts';
import { previousIndex } from './previous-index.ts';
import { readOnPool } from './read-on-pool.ts';
import { readOnThread } from './read-on-thread.ts';
import type { FileWay } from './write-way.ts';

export const build: FileWay = async (job) => {
  const { client, index, plan, file, description, pool, indexedAt, flushBytes, signal } = job;
  await createIndex(client, index, description.mapping, plan.shards);
  // Rows seen before keep their first-seen instant, read from the live index of the same name.
  const previous = plan.previous && description.firstSeen ? previousIndex(client, plan.previous) : undefined;
  const lineIndex = await job.lineIndex();
  const onPool = pool !== undefined && description.prepare === undefined ? pool : undefined;
  const loaded = await loadFile({ ...job, previous, lineIndex }, (rows, stream) =>
    onPool
      ? readOnPool(rows, stream, { pool: onPool, file, description, previous, indexedAt, flushBytes, lineIndex, signal })
      : readOnThread(rows, stream, { file, lineIndex, signal }),
  );
  return { result: loaded };
};
