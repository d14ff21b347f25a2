/**
 * The rows an index holds, read straight from Elasticsearch whichever way its mapping keeps them
 * (`_source.row`, or base64 doc values: `rowsInDocValues`): tests compare them with the bundle's
 * lines without going through the gateway.
 */
import type { Client, estypes } from '@elastic/elasticsearch';
import { ROW, rowOfHit } from '../../src/indices/description.ts';

export type StoredHit = { row: Record<string, unknown>; fields: Record<string, unknown[]> };

/** The hits of a search, each with its row; `docvalue_fields` asked are kept in `fields`. */
export async function storedRows(client: Client, request: estypes.SearchRequest): Promise<StoredHit[]> {
  const response = await client.search<{ row?: Record<string, unknown> }>({ ...request, docvalue_fields: [...(request.docvalue_fields ?? []), ROW] });
  return response.hits.hits.map((hit) => {
    const fields = (hit.fields ?? {}) as Record<string, unknown[]>;
    const row = rowOfHit(hit);
    if (!row) throw new Error(`a hit of ${hit._index} without its row`);
    return { row, fields };
  });
}
