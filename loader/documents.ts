/**
 * Whole documents read and written outside a file's load: every document of an index walked in
 * pages under one point in time, reading doc values only (an update's sweep, the scan of the live
 * index against the new one, a derived index's source), and documents written with the client's
 * bulk helper, a refusal failing the load.
 */
import type { Client } from '@elastic/elasticsearch';
import { LoadError } from './errors.ts';

/** A hit of a doc-values walk. */
export type ScannedHit = { _id?: string; fields?: Record<string, unknown[]>; sort?: unknown[] };

export interface ScanOptions {
  /** Doc values read (a `date_nanos` one with its text format). */
  fields: readonly (string | { field: string; format: string })[];
  /** Keyword or instant fields, ascending, before `_shard_doc` (default: `_shard_doc` alone, the cheapest order). */
  sort?: readonly string[];
  query?: Record<string, unknown>;
  pageSize: number;
  signal?: AbortSignal;
}

/** Every document of `index` (or of `query`), a page at a time; the point in time is closed however the walk ends. */
export async function* scanDocuments(client: Client, index: string, options: ScanOptions): AsyncGenerator<ScannedHit[]> {
  const { fields, sort = [], query, pageSize, signal } = options;
  const pit = await client.openPointInTime({ index, keep_alive: '1m' });
  try {
    let after: unknown[] | undefined;
    for (;;) {
      signal?.throwIfAborted();
      const page = await client.search({
        pit: { id: pit.id, keep_alive: '1m' },
        size: pageSize,
        ...(query ? { query } : {}),
        sort: [...sort.map((field) => ({ [field]: 'asc' as const })), { _shard_doc: 'asc' as const }],
        _source: false,
        docvalue_fields: [...fields] as never,
        track_total_hits: false,
        ...(after ? { search_after: after as never } : {}),
      });
      const hits = page.hits.hits as ScannedHit[];
      if (hits.length === 0) return;
      yield hits;
      after = hits.at(-1)!.sort;
    }
  } finally {
    await client.closePointInTime({ id: pit.id }).catch(() => {});
  }
}

/** Indexes documents into `index` under `idOf`; a document Elasticsearch refuses fails the load (`Elasticsearch refused <n> <what>`). */
export async function writeDocuments(client: Client, index: string, documents: AsyncGenerator<Record<string, unknown>> | Record<string, unknown>[], idOf: (doc: Record<string, unknown>) => string, what: string): Promise<void> {
  let dropped = 0;
  await client.helpers.bulk({
    datasource: documents,
    onDocument: (doc) => ({ index: { _index: index, _id: idOf(doc) } }),
    onDrop: () => {
      dropped += 1;
    },
  });
  if (dropped > 0) throw new LoadError(`Elasticsearch refused ${dropped} ${what}`);
}
