/**
 * An index updated from the live one instead of rebuilt (the plan's `update`): the live index
 * is cloned (hard-linked segments), the file is streamed against it — lines the clone holds are
 * counted and skipped, new and changed lines are indexed (load-file.ts) — and then the rows that
 * left the file are deleted.
 *
 * Over the live index's line index, the merge names the rows that left (by the hash of their
 * line, which their documents carry: one search per thousand finds them) and the documents the
 * index must hold: nothing here grows with the unchanged rows. Without one, when the clone holds
 * more documents than the file has distinct ids, a scan of its ids (doc values, in index order,
 * under a point in time) finds those the file lacks.
 */
import type { Client } from '@elastic/elasticsearch';
import { type FileLoadResult, type LoadFileOptions, loadJsonlFile } from './load-file.ts';
import { cloneIndex } from './generations.ts';
import { LoadError } from './errors.ts';
import { scanDocuments } from './documents.ts';
import { rowHashText } from './line-index.ts';
import { ROW_HASH } from '../src/indices/description.ts';

const SCAN_PAGE = 10_000;
/** Line hashes per search when deleting the rows that left. */
const REMOVE_BATCH = 1000;

/** Deletes the documents of these line hashes (each names one document of the clone); returns their ids. */
async function removeLines(client: Client, index: string, lineHashes: readonly Uint8Array[]): Promise<string[]> {
  const deleted: string[] = [];
  for (let at = 0; at < lineHashes.length; at += REMOVE_BATCH) {
    const hashes = lineHashes.slice(at, at + REMOVE_BATCH).map(rowHashText);
    const found = await client.search({ index, size: hashes.length, _source: false, track_total_hits: false, query: { terms: { [ROW_HASH]: hashes } }, docvalue_fields: ['id'] });
    const hits = found.hits.hits;
    if (hits.length !== hashes.length) throw new LoadError(`${index}: ${hashes.length} rows left the file, ${hits.length} found to delete (the line index does not match the index)`);
    const response = await client.bulk({ operations: hits.map((hit) => ({ delete: { _index: index, _id: hit._id! } })), filter_path: 'errors' });
    if (response.errors) throw new LoadError(`Elasticsearch refused to delete rows that left ${index}`);
    for (const hit of hits) deleted.push(String((hit.fields?.id as unknown[] | undefined)?.[0]));
  }
  return deleted;
}

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

export interface UpdateResult extends FileLoadResult {
  /** Rows deleted because they left the file. */
  removed: number;
  /** Their ids, where an update over a line index found them (a sweep's are not kept: loader/changes.ts scans instead). */
  leftIds?: string[];
}

/** Clones `from` into `options.index` and brings it to the file's rows. */
export async function updateIndex(options: LoadFileOptions & { from: string }): Promise<UpdateResult> {
  const { client, index, from } = options;
  await cloneIndex(client, from, index);
  const result = await loadJsonlFile({ ...options, update: true });
  if (result.match) {
    const leftIds = await removeLines(client, index, result.match.removed);
    return { ...result, removed: leftIds.length, leftIds, documents: result.match.documents };
  }
  const ids = result.ids!;
  const distinct = ids.seal();
  await client.indices.refresh({ index });
  const held = (await client.count({ index })).count;
  const removed = held > distinct ? await sweep(client, index, (id) => ids.has(id)) : 0;
  return { ...result, removed, documents: distinct };
}
