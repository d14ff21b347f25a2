/**
 * An update over the live index's line index: the live index is cloned (hard-linked segments),
 * each chunk of the file is merged against its line index in file order (line-match.ts), and
 * only the lines it does not hold are parsed and sent. The merge also names the rows that left
 * (by the hash of their line, which their documents carry: one search per thousand finds and
 * deletes them) and the documents the index must hold: nothing here grows with the unchanged
 * rows. It gives up for a build (RebuildInstead) as soon as the file shows it mostly changed.
 */
import type { Client } from '@elastic/elasticsearch';
import { ROW_HASH } from '../src/indices/description.ts';
import { idsOfLines } from './changes.ts';
import { LoadError, RebuildInstead } from './errors.ts';
import { cloneIndex } from './generations.ts';
import { type LineIndexWriter, rowHashText } from './line-index.ts';
import { LineMatcher } from './line-match.ts';
import { type ItemSource, loadFile } from './load-file.ts';
import { updateStillPays } from './plan.ts';
import { previousIndex } from './previous-index.ts';
import { type ChunkStream, blankRow } from './read-lines.ts';
import type { Pending, RowItems, Waiting } from './row-items.ts';
import type { FileWay, LiveLineIndex, Match } from './write-way.ts';

/** Line hashes per search when deleting the rows that left. */
const REMOVE_BATCH = 1000;

/** The file's lines merged against `old`: the items of the lines it does not hold, and once drained, the match. */
function readAgainst(rows: RowItems, stream: ChunkStream, old: LiveLineIndex, reading: { file: { path: string; rowCount: number }; lineIndex: LineIndexWriter; signal?: AbortSignal }): ItemSource & { match(): Match } {
  const { file, lineIndex, signal } = reading;
  let waiting: Waiting[] = [];
  const matcher = new LineMatcher(old, lineIndex, file.path, (found) => {
    if (blankRow(found, file.path, rows.shapeChecked)) return undefined;
    const { text, bytes, line, digest } = found;
    const built = rows.parse(text, line);
    waiting.push({ ...built, bytes, line, hash: rowHashText(digest) });
    return built.doc.id;
  });
  let counted = 0;
  let match: Match | undefined;
  /** The items of the lines sent since the last call, and the skipped ones counted. */
  const drain = (): Promise<Pending[]> => {
    const batch = waiting;
    waiting = [];
    rows.skipped(matcher.counts.unchanged - counted);
    counted = matcher.counts.unchanged;
    return rows.items(batch);
  };
  const check = () => {
    const { sent, lines } = matcher.counts;
    if (!updateStillPays({ sent, matched: matcher.matched, rows: file.rowCount, previousDocuments: old.header.entries })) {
      throw new RebuildInstead(`${sent} of the first ${lines} lines are not in the live index`);
    }
  };
  async function* items(): AsyncGenerator<Pending> {
    for await (const chunk of stream.chunks) {
      signal?.throwIfAborted();
      matcher.push(chunk.bytes);
      check();
      yield* await drain();
    }
    matcher.end();
    check();
    yield* await drain();
    match = { ...matcher.counts, ...matcher.finish() };
  }
  return {
    items: items(),
    counts: () => ({ rows: matcher.counts.unchanged + matcher.counts.sent, blankLines: matcher.counts.blankLines }),
    match: () => match!,
  };
}

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

export const updateOverLineIndex: FileWay = async (job) => {
  const { client, index, plan, file, against, signal } = job;
  await cloneIndex(client, plan.from!, index);
  const lineIndex = await job.lineIndex();
  let read: ReturnType<typeof readAgainst> | undefined;
  const loaded = await loadFile({ ...job, previous: previousIndex(client, plan.from!), lineIndex }, (rows, stream) => {
    read = readAgainst(rows, stream, against!, { file, lineIndex, signal });
    return read;
  });
  const match = read!.match();
  const leftIds = await removeLines(client, index, match.removed);
  return {
    result: { ...loaded, match, removed: leftIds.length, leftIds, documents: match.documents },
    changes: async (previous) => ({ left: leftIds, changed: await idsOfLines(client, previous, (match.changedLines ?? []).map(rowHashText)) }),
  };
};
