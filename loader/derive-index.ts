/**
 * Builds a derived index (an index description with `derive`: battle_kills) from another index
 * of the generation being loaded, once that one is loaded and refreshed: a scan of it under a
 * point in time in the description's order (loader/documents.ts), its pages handed to the
 * description's `rows`, each row written through `toDocument`. Nothing of it is held whole: the
 * rows stream from the scan to the bulk requests.
 */
import type { Client } from '@elastic/elasticsearch';
import { type IndexDescription, type LoadContext, ROW, documentId, rowsInDocValues } from '../src/indices/description.ts';
import { scanDocuments, writeDocuments } from './documents.ts';

const SCAN_PAGE = 5_000;

/** Writes the derived rows into `index` (created by the caller); returns how many. */
export async function deriveIndex(options: { client: Client; index: string; from: string; fromDescription: IndexDescription<any>; description: IndexDescription<any>; context: LoadContext; signal?: AbortSignal }): Promise<number> {
  const { client, index, from, fromDescription, description, context, signal } = options;
  const derivation = description.derive!;
  const rowsInValues = rowsInDocValues(description.mapping);
  let rows = 0;
  const pages = scanDocuments(client, from, { query: derivation.query, sort: derivation.sort, fields: [...derivation.fields, ...(rowsInDocValues(fromDescription.mapping) ? [ROW] : [])], pageSize: SCAN_PAGE, signal });
  const documents = async function* () {
    for await (const row of derivation.rows(pages, context)) {
      const doc = description.toDocument(row, context) as Record<string, unknown>;
      rows += 1;
      yield rowsInValues ? { ...doc, [ROW]: Buffer.from(JSON.stringify(doc[ROW])).toString('base64') } : doc;
    }
  };
  await writeDocuments(client, index, documents(), (doc) => documentId(String(doc.id)), `documents of ${index}`);
  return rows;
}
