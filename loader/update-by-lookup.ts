/**
 * An update that asks Elasticsearch, where the live index has no line index it can trust: the
 * live index is cloned (hard-linked segments), the file is read on the loader's thread with
 * every line's hash looked up in the live index (read-on-thread.ts `lookup`) — lines the clone
 * holds are counted and skipped, new and changed lines are indexed — and then, when the clone
 * holds more documents than the file has distinct ids, a scan of its ids (doc values, in index
 * order, under a point in time) finds and deletes those the file lacks.
 */
import type { Client } from '@elastic/elasticsearch';
import { scanDocuments } from './documents.ts';
import { LoadError } from './errors.ts';
import { cloneIndex } from './generations.ts';
import { IdSet } from './id-set.ts';
import { loadFile } from './load-file.ts';
import { previousIndex } from './previous-index.ts';
import { readOnThread } from './read-on-thread.ts';
import type { FileWay } from './write-way.ts';

const SCAN_PAGE = 10_000;

/** Deletes the documents whose id the file does not have; returns how many. */
async function sweep(client: Client, index: string, keep: (id: string) => boolean): Promise<number> {
  let deleted = 0;
  for await (const hits of scanDocuments(client, index, { fields: ['id'], pageSize: SCAN_PAGE })) {
    const gone = hits.filter((hit) => !keep(String(hit.fields?.id?.[0])));
    if (gone.length === 0) continue;
    const response = await client.bulk({ operations: gone.map((hit) => ({ delete: { _index: index, _id: hit._id! } })), filter_path: 'errors' });
    if (response.errors) throw new LoadError(`Elasticsearch refused to delete rows that left ${index}`);
    deleted += gone.length;
  }
  return deleted;
}

export const updateByLookup: FileWay = async (job) => {
  const { client, index, plan, file, signal } = job;
  await cloneIndex(client, plan.from!, index);
  const previous = previousIndex(client, plan.from!);
  const ids = new IdSet(file.rowCount);
  const lineIndex = await job.lineIndex();
  const loaded = await loadFile({ ...job, previous, lineIndex }, (rows, stream) =>
    readOnThread(rows, stream, { file, lineIndex, lookup: { previous, ids }, signal }),
  );
  const distinct = ids.seal();
  await client.indices.refresh({ index });
  const held = (await client.count({ index })).count;
  const removed = held > distinct ? await sweep(client, index, (id) => ids.has(id)) : 0;
  return { result: { ...loaded, ids, removed, documents: distinct } };
};
