/**
 * What a load asks of the index the live generation reads for the same name: which lines it
 * already holds unchanged (by the hash of the exported line), and when ids were first seen.
 * One search per batch of lines, reading doc values only (never `_source`): the previous index
 * is finished and write-blocked, so every answer is stable for the whole load.
 */
import type { Client } from '@elastic/elasticsearch';
import { FIRST_SEEN, ROW_HASH } from '../src/indices/description.ts';

/** `date_nanos` doc values as exact text (as the gateway's sorts read them). */
const NANOS = 'strict_date_optional_time_nanos';

export interface PreviousIndex {
  /** Of these line hashes, those a document of the previous index has → that document's id. */
  unchanged(hashes: readonly string[]): Promise<Map<string, string>>;
  /** The first-seen instants the previous index holds for these ids (ids it lacks are left out). */
  firstSeen(ids: readonly string[]): Promise<Map<string, string>>;
}

type Hit = { fields?: Record<string, unknown[]> };

export function previousIndex(client: Client, index: string): PreviousIndex {
  async function lookup(field: string, values: readonly string[], fields: (string | { field: string; format: string })[]): Promise<Hit[]> {
    if (values.length === 0) return [];
    const response = await client.search({
      index,
      size: values.length,
      _source: false,
      track_total_hits: false,
      query: { terms: { [field]: [...values] } },
      docvalue_fields: fields as never,
      filter_path: 'hits.hits.fields',
    });
    return (response.hits?.hits ?? []) as Hit[];
  }

  return {
    async unchanged(hashes) {
      const found = new Map<string, string>();
      for (const { fields } of await lookup(ROW_HASH, hashes, ['id', ROW_HASH])) {
        const hash = fields?.[ROW_HASH]?.[0];
        const id = fields?.id?.[0];
        if (typeof hash === 'string' && typeof id === 'string') found.set(hash, id);
      }
      return found;
    },
    async firstSeen(ids) {
      const found = new Map<string, string>();
      for (const { fields } of await lookup('id', ids, ['id', { field: FIRST_SEEN, format: NANOS }])) {
        const id = fields?.id?.[0];
        const at = fields?.[FIRST_SEEN]?.[0];
        if (typeof id === 'string' && typeof at === 'string') found.set(id, at);
      }
      return found;
    },
  };
}
