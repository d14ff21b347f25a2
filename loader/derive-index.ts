/**
 * Builds a derived index (an index description with `derive`: battle_kills) from another index
 * of the generation being loaded, once that one is loaded and refreshed: a scan of it under a
 * point in time, in the description's order, its pages handed to the description's `rows`, each
 * row written through `toDocument` with the client's bulk helper. Nothing of it is held whole:
 * the rows stream from the scan to the bulk requests.
 */
import type { Client } from '@elastic/elasticsearch';
import { type IndexDescription, type LoadContext, ROW, documentId, rowsInDocValues } from '../src/indices/description.ts';
import { LoadError } from './errors.ts';

const SCAN_PAGE = 5_000;

async function* scan(client: Client, index: string, derivation: NonNullable<IndexDescription['derive']>, rowsInValues: boolean, signal?: AbortSignal) {
  const pit = await client.openPointInTime({ index, keep_alive: '1m' });
  try {
    let after: unknown[] | undefined;
    for (;;) {
      signal?.throwIfAborted();
      const page = await client.search({
        pit: { id: pit.id, keep_alive: '1m' },
        size: SCAN_PAGE,
        query: derivation.query,
        sort: [...derivation.sort.map((field) => ({ [field]: 'asc' as const })), { _shard_doc: 'asc' as const }],
        _source: false,
        docvalue_fields: [...derivation.fields, ...(rowsInValues ? [ROW] : [])],
        track_total_hits: false,
        ...(after ? { search_after: after as never } : {}),
      });
      const hits = page.hits.hits;
      if (hits.length === 0) return;
      yield hits as { fields?: Record<string, unknown[]> }[];
      after = hits.at(-1)!.sort;
    }
  } finally {
    await client.closePointInTime({ id: pit.id }).catch(() => {});
  }
}

/** Writes the derived rows into `index` (created by the caller); returns how many. */
export async function deriveIndex(options: { client: Client; index: string; from: string; fromDescription: IndexDescription<any>; description: IndexDescription<any>; context: LoadContext; signal?: AbortSignal }): Promise<number> {
  const { client, index, from, fromDescription, description, context, signal } = options;
  const derivation = description.derive!;
  const rowsInValues = rowsInDocValues(description.mapping);
  let rows = 0;
  const documents = async function* () {
    for await (const row of derivation.rows(scan(client, from, derivation, rowsInDocValues(fromDescription.mapping), signal), context)) {
      const doc = description.toDocument(row, context) as Record<string, unknown>;
      rows += 1;
      yield rowsInValues ? { ...doc, [ROW]: Buffer.from(JSON.stringify(doc[ROW])).toString('base64') } : doc;
    }
  };
  let dropped = 0;
  await client.helpers.bulk({
    datasource: documents(),
    onDocument: (doc) => ({ index: { _index: index, _id: documentId(String(doc.id)) } }),
    onDrop: () => {
      dropped += 1;
    },
  });
  if (dropped > 0) throw new LoadError(`Elasticsearch refused ${dropped} documents of ${index}`);
  return rows;
}
