/**
 * Writes a load's rows that left and rows that changed into the changes index of each index that
 * keeps them (src/indices/changes.ts), before the swap: a tombstone for each id the new index
 * lacks, the new row again for each id it holds with another line, each stamped with the load's
 * first-seen instant, so that both become visible with the generation.
 *
 * Which ids: an update over a line index knows them (the old lines that left the file, and those
 * whose id came again with another line); otherwise the live index is scanned against the new
 * one (ids and line hashes, doc values only). A load that fails takes its changes back
 * (`dropChangesAfter`), and so does the next load for one that died without saying so, and a
 * rollback for the generation it leaves.
 */
import type { Client } from '@elastic/elasticsearch';
import { changesIndexName, changesMapping, copiedFields, tombstoneRow } from '../src/indices/changes.ts';
import { FIRST_SEEN, type IndexDescription, NANOS_FORMAT, ROW, ROW_HASH, documentId, rowsInDocValues } from '../src/indices/description.ts';
import { type ScannedHit, scanDocuments, writeDocuments } from './documents.ts';

const PAGE = 5_000;
const BATCH = 1_000;

type Hit = ScannedHit & { _source?: unknown };

export interface RowsThatChanged {
  left: string[];
  changed: string[];
}

/** The ids `previous` holds that `next` lacks (left) or holds with another line (changed). */
export async function diffIndices(client: Client, previous: string, next: string): Promise<RowsThatChanged> {
  const left: string[] = [];
  const changed: string[] = [];
  const hashes = (hits: readonly ScannedHit[]) => new Map(hits.map((hit) => [String(hit.fields?.id?.[0]), String(hit.fields?.[ROW_HASH]?.[0])]));
  for await (const page of scanDocuments(client, previous, { fields: ['id', ROW_HASH], pageSize: PAGE })) {
    const old = hashes(page);
    const found = await client.search({ index: next, size: old.size, _source: false, track_total_hits: false, query: { terms: { id: [...old.keys()] } }, docvalue_fields: ['id', ROW_HASH] });
    const now = hashes(found.hits.hits as ScannedHit[]);
    for (const [id, hash] of old) {
      if (!now.has(id)) left.push(id);
      else if (now.get(id) !== hash) changed.push(id);
    }
  }
  return { left, changed };
}

/** Of these line hashes, the ids of the documents of `index` that have them. */
export async function idsOfLines(client: Client, index: string, hashes: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (let at = 0; at < hashes.length; at += BATCH) {
    const part = hashes.slice(at, at + BATCH);
    const found = await client.search({ index, size: part.length, _source: false, track_total_hits: false, query: { terms: { [ROW_HASH]: part } }, docvalue_fields: ['id'] });
    for (const hit of found.hits.hits as Hit[]) ids.push(String(hit.fields?.id?.[0]));
  }
  return ids;
}

/** A document's copied fields from its doc values: one value as itself, several as a list. */
function fieldsOf(hit: Hit, fields: readonly (string | { field: string })[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const spec of fields) {
    const field = typeof spec === 'string' ? spec : spec.field;
    const values = hit.fields?.[field];
    if (values?.length) out[field] = values.length === 1 ? values[0] : values;
  }
  return out;
}

/** Creates the changes index of a description if it is missing; returns its name. */
export async function ensureChangesIndex(client: Client, prefix: string, description: IndexDescription<any>): Promise<string> {
  const name = changesIndexName(prefix, description.name, description.mapping);
  if (!(await client.indices.exists({ index: name }))) {
    const { settings, mappings } = changesMapping(description.mapping);
    await client.indices.create({ index: name, settings: settings as never, mappings: mappings as never }, { ignore: [400] });
  }
  return name;
}

/** Writes the tombstones of `left` (fields from `previous`) and the new rows of `changed` (from `next`) at instant `at`; the caller refreshes the index once. */
export async function writeChanges(client: Client, options: { index: string; description: IndexDescription<any>; previous: string; next: string; rows: RowsThatChanged; at: string }): Promise<number> {
  const { index, description, previous, next, rows, at } = options;
  const fields = copiedFields(description.mapping);
  const inValues = rowsInDocValues(description.mapping);
  const encode = (row: unknown) => (inValues ? Buffer.from(JSON.stringify(row)).toString('base64') : row);
  const read = (from: string, ids: string[], withRow: boolean) =>
    client.search({
      index: from,
      size: ids.length,
      track_total_hits: false,
      query: { ids: { values: ids.map(documentId) } },
      docvalue_fields: [...fields, ...(withRow && inValues ? [ROW] : [])] as never,
      _source: withRow && !inValues ? [ROW] : false,
    });
  const documents: Record<string, unknown>[] = [];
  for (const [ids, from, removed] of [[rows.left, previous, true], [rows.changed, next, false]] as const) {
    for (let start = 0; start < ids.length; start += BATCH) {
      const found = await read(from, ids.slice(start, start + BATCH), !removed);
      for (const hit of found.hits.hits as Hit[]) {
        const id = String(hit.fields?.id?.[0]);
        const row = removed ? encode(tombstoneRow(id, at)) : inValues ? hit.fields?.[ROW]?.[0] : (hit._source as { row?: unknown } | undefined)?.row;
        documents.push({ ...fieldsOf(hit, fields), [FIRST_SEEN]: at, [ROW]: row });
      }
    }
  }
  if (documents.length === 0) return 0;
  await writeDocuments(client, index, documents, (doc) => documentId(String(doc.id)), `changes of ${description.name}`);
  return documents.length;
}

/** Deletes the changes of these indices matching `range` on their instant (a load that never went live; those older than TOMBSTONE_DAYS). */
async function deleteChanges(client: Client, indices: readonly string[], range: Record<string, string>): Promise<number> {
  if (indices.length === 0) return 0;
  let deleted = 0;
  for (;;) {
    const found = await client.search(
      { index: indices.join(','), size: PAGE, _source: false, track_total_hits: false, query: { range: { [FIRST_SEEN]: { ...range, format: NANOS_FORMAT } } }, ignore_unavailable: true },
    );
    const hits = found.hits.hits;
    if (hits.length === 0) return deleted;
    await client.bulk({ operations: hits.map((hit) => ({ delete: { _index: hit._index, _id: hit._id! } })), refresh: true, filter_path: 'errors' });
    deleted += hits.length;
  }
}

/** Takes back the changes stamped after `instant`: those of a load that did not go live, or of the generation a rollback leaves. */
export const dropChangesAfter = (client: Client, indices: readonly string[], instant: string) => deleteChanges(client, indices, { gt: instant });

/** Forgets the changes older than `instant` (TOMBSTONE_DAYS). */
export const pruneChangesBefore = (client: Client, indices: readonly string[], instant: string) => deleteChanges(client, indices, { lt: instant });
