/**
 * The one Elasticsearch boundary of the gateway: every read goes through here.
 *
 * A request reads one generation throughout (the live one, or the one its cursor was read
 * from while that generation is kept), by concrete index names, so a reload in the middle
 * of a request or between two pages never mixes data. The live generation document is
 * cached for a second; an alias swap is seen within that time. Failures become `ApiError`s
 * (see errors.ts) and are timed per index on the metrics.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type Client, errors, type estypes } from '@elastic/elasticsearch';
import { LRUCache } from 'lru-cache';
import { ApiError } from '../errors.ts';
import { type Admission, type Ticket, ticketOf } from '../limits/admission.ts';
import type { IndexName } from '../indices/all.ts';
import { FIRST_SEEN, NANOS_FORMAT, ROW, documentId, originalOfHit, rowOfHit, rowsOfIds } from '../indices/description.ts';
import { type GenerationDoc, META_INDEX, aliasName, concreteIndex, indexName } from '../indices/generation.ts';
import { STATE_INDEX } from '../indices/state.ts';
import { BUNDLES_INDEX, type BundleRecord, bundlesIndex } from '../indices/bundles.ts';
import type { Count } from '../query/cursor.ts';
import type { SearchBody } from '../query/list.ts';
import { toApiError } from './errors.ts';
import { reusedFor } from './reused-for.ts';
import { type RawPage, rawHits } from './raw-hits.ts';
import { HotRequests } from './hot-requests.ts';

export interface RowsOptions {
  /**
   * Read the index's changes too (src/indices/changes.ts): tombstones and changed rows in the
   * same order. The query must keep them to this generation's (`visibleThrough`).
   */
  withChanges?: boolean;
}

export interface Reader {
  readonly generation: GenerationDoc;
  search<T>(index: IndexName, body: SearchBody): Promise<estypes.SearchResponse<T>>;
  /** The hits' rows and sort values as the bytes Elasticsearch sent (list pages pass rows through), and the count when tracked. */
  searchRows(index: IndexName, body: SearchBody, options?: RowsOptions): Promise<RawPage>;
  /** Documents by id, in the order asked; missing ids are left out. */
  getMany<T>(index: IndexName, ids: string[]): Promise<T[]>;
  /** A document by id with the exported line it keeps as the stored field `original` (see `keepsLine`). */
  getWithOriginal<T>(index: IndexName, id: string): Promise<{ source: T; original: Record<string, unknown> } | undefined>;
  count(index: IndexName, query?: estypes.QueryDslQueryContainer): Promise<number>;
  /** The concrete name of one of this generation's indices (a body that names indices by `_index`). */
  indexName(index: IndexName): string;
  /** One search over several of this generation's indices, for doc values only (no rows): each hit's fields and the index it came from. */
  searchAcross(indices: readonly IndexName[], body: SearchBody): Promise<{ index: IndexName; fields: Record<string, unknown[]> }[]>;
  /**
   * The count of `query` (counted exactly up to `upTo`, `true`: always) as a page of this
   * generation read it before, if one did: a generation never changes once live, so its counts
   * do not either, and a first page that knows its count asks none (see `rememberCount`).
   */
  knownCount(index: IndexName, query: estypes.QueryDslQueryContainer, upTo: boolean | number): Count | undefined;
  rememberCount(index: IndexName, query: estypes.QueryDslQueryContainer, upTo: boolean | number, count: Count): void;
  /**
   * Every row of a query in its (total) order, `pageSize` at a time, under a point in time: one
   * consistent view however long the walk, the PIT closed when the walk ends or is abandoned
   * (the caller stops iterating: a client gone mid-download). The first page counts the rows up
   * to `countUpTo`.
   */
  scan(index: IndexName, body: Pick<SearchBody, 'query' | 'sort'>, options: { pageSize: number; countUpTo: number } & RowsOptions): AsyncGenerator<RawPage>;
  /** When the row of `id` (matched on `fields`) left `index`, if this generation's changes say it did. */
  removedAt(index: IndexName, id: string, fields?: readonly string[]): Promise<string | undefined>;
}

export interface SearchService {
  /**
   * A reader on the live generation, or on `generation` when a cursor names one. Its
   * Elasticsearch requests are admitted (admission control) as `ticket`'s: the request's, which
   * the rate limit issued (src/http/middleware/rate-limit.ts), or the gateway's own (`UNADMITTED`).
   */
  reader(ticket: Ticket, generation?: string): Promise<Reader>;
  /** The live generation, or undefined when nothing is loaded (ES reachable). */
  live(): Promise<GenerationDoc | undefined>;
  /**
   * The live generation as last read from ES (undefined before that, or when ES said nothing
   * is loaded). Exports fall back to it while ES cannot be reached: their files are local.
   */
  lastLive(): GenerationDoc | undefined;
  /** Cluster health status; throws `unavailable` when ES does not answer. */
  health(): Promise<string>;
  /** A document of the loaders' state index (`follower`, ...), or undefined. */
  state<T>(id: string): Promise<T | undefined>;
  /** The generations kept (any of them can be read: a cursor's, a pinned `bundle=`), newest first. */
  kept(): Promise<KeptGeneration[]>;
  /**
   * The bundle record (src/indices/bundles.ts), newest load first: `limit` loads after `after`
   * (a load's sort values), or every load of `bundleId`. Empty while nothing was ever recorded.
   */
  bundleRecords(query: { bundleId?: string; limit: number; after?: unknown[]; whole?: boolean }): Promise<{ loads: { record: BundleRecord; sort: unknown[] }[]; total: number }>;
}

/** A kept generation, as the bundle routes and pinned reads need it. */
export type KeptGeneration = Pick<GenerationDoc, 'generation' | 'bundleId' | 'loadedAt'>;

/** Kept generation documents held at once (each for LIVE_CACHE_MS): cursors and pins of a few generations at a time. */
const KEPT_DOCS_CACHED = 64;

/**
 * How long the elected master may take to say where the live alias points (fetchLive), and a node
 * to pass that on: a node cut off from the master holds the request until it notices (tens of
 * seconds), so each ask is bounded and asked again of the next node, LIVE_LOOKUP_TRIES times.
 */
const MASTER_TIMEOUT_MS = 2_000;
const LIVE_LOOKUP_TRIES = 3;

/** Kept generations read at most (a loader keeps KEEP_GENERATIONS: config/loader.ts bounds it below this). */
const MAX_KEPT = 1000;

/** How long a download's point in time outlives its last page request. */
const PIT_KEEP_ALIVE = '1m';

/**
 * A list page's search, as rows and sort values (and the count when tracked), is read whole: a
 * `filter_path` would leave out only a hit's `_index`, `_id` and `_score`, but Elasticsearch then
 * parses every hit's stored `_source` and writes it again through the filter, where a whole
 * response copies its bytes as they are; rows are the bulk of a page, so that cost it more than
 * the bytes saved (raw-hits.ts reads both forms). And it is kept in Elasticsearch's shard request
 * cache (which, unless asked, keeps only `size: 0` searches): a generation is never written
 * again once live, so an entry stays right for as long as the generation is read, and the same
 * page asked again costs its fetch alone, not the query, sort and count again.
 */
const LIST_PARAMETERS = { request_cache: true } as const;

/** The request path of a list search on a concrete index (the benchmark sends the same request directly). */
export function searchPath(index: string): string {
  return `/${index}/_search?request_cache=${LIST_PARAMETERS.request_cache}`;
}

/** Whether `generation` keeps the rows of `index` as doc values (`docValueRows`; generations written before keep them in `_source`). */
function rowsInDocValuesOf(generation: Pick<GenerationDoc, 'docValueRows'>, index: IndexName): boolean {
  return generation.docValueRows?.includes(index) ?? false;
}

/**
 * The search the reader sends for `body` on `index` of `generation` (the benchmarks send the same
 * directly). Where the generation keeps the index's rows as doc values (`docValueRows`), a search
 * that returns rows — its hits, or its suggestions' options — asks for the row field and no
 * stored fields, and a `filter_path` naming `_source.row` names `fields.row` instead; the parsed
 * reads below turn such a row back into the `{ row }` a `_source` would have been, so callers read
 * every index alike.
 */
export function rowRequest<B extends SearchBody>(generation: Pick<GenerationDoc, 'docValueRows'>, index: IndexName, body: B): B {
  const returnsRows = body._source !== false && (body.size !== 0 || body.suggest !== undefined);
  if (!returnsRows || !rowsInDocValuesOf(generation, index)) return body;
  const filterPath = typeof body.filter_path === 'string' ? { filter_path: body.filter_path.replaceAll('_source.row', `fields.${ROW}`) } : {};
  return { ...body, stored_fields: '_none_', docvalue_fields: [...(body.docvalue_fields ?? []), ROW], ...filterPath };
}

type Hit = { _source?: unknown; fields?: Record<string, unknown> };

/** A doc-values hit's row as the `{ row }` source other indices store (left as it is without one). */
function withSource(hit: Hit): void {
  if (hit.fields?.[ROW] !== undefined) hit._source = { row: rowOfHit(hit) };
}

/** Counts of queries as pages read them: keys hold generation, index and query, so a swap needs no clearing. */
const COUNT_CACHE_BYTES = 4 * 1024 * 1024;

/** An error body as the client would have parsed it (JSON, else its text). */
function parseError(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return bytes.toString('utf8');
  }
}

/** The body of a streamed response, whole: read by its events rather than an async iterator, which costs a promise per chunk. */
export function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    stream.once('error', reject);
  });
}

export interface SearchServiceOptions {
  client: Client;
  prefix: string;
  /** Observes each ES request: index name (without generation) and seconds. */
  observe?: (index: string, seconds: number, ok: boolean) => void;
  /** Logs an ES failure with its reason (never sent to clients). */
  onError?: (error: unknown, index: string) => void;
  liveCacheMs?: number;
  /** Searches warmed on a new generation before it is served (default WARM_REQUESTS; 0: served at once). */
  warmRequests?: number;
  /**
   * Admission control (src/limits/admission.ts): runs a reader's ES request for its ticket when a
   * slot is free, or throws `overloaded`. The service's own small reads (which
   * generation is live, a cursor's generation, cluster health, the loaders' state) carry no
   * ticket and are never admitted: every request waits on the live generation's lookup, and its
   * refusal would fail them all.
   */
  admission?: Pick<Admission, 'run'>;
}

/** How long the live generation read from Elasticsearch is reused (a swap is seen within it). */
export const LIVE_CACHE_MS = 1000;

/**
 * A new generation is served once the most asked expensive searches of the gateway (hot-requests.ts)
 * have run on it, WARM_REQUESTS of them, for WARM_MAX_MS at most, the replaced generation
 * answering meanwhile. Its indices are new and their shard request caches empty: the first
 * `group_by` of a list over 10 M events costs Elasticsearch about a second, later ones a few
 * milliseconds from the cache. Elasticsearch computes concurrent identical searches once, so a
 * client that asks the same meanwhile waits for that computation, and gateways that warm the
 * same searches cost it once. The replaced generation answers only while it is kept (a load
 * with KEEP_GENERATIONS=1 drops it at the swap): else the new one is served at once.
 */
export const WARM_REQUESTS = 16;
export const WARM_MAX_MS = 2000;

export function createSearchService(options: SearchServiceOptions): SearchService {
  const { client, prefix, observe, onError, liveCacheMs = LIVE_CACHE_MS, warmRequests = WARM_REQUESTS, admission } = options;
  let lastLive: GenerationDoc | undefined;
  /** The generation requests read; the live one once it is warmed. */
  let served: GenerationDoc | undefined;
  /** The generation being warmed, if one is. */
  let warming: string | undefined;
  const hot = new HotRequests();

  // Admitted first, then timed: time spent waiting for a slot is not Elasticsearch's.
  const timed = <T>(index: string, call: () => Promise<T>, ticket?: Ticket): Promise<T> =>
    admission && ticket ? admission.run(() => timedCall(index, call), ticket) : timedCall(index, call);

  async function timedCall<T>(index: string, call: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      const result = await call();
      observe?.(index, (performance.now() - started) / 1000, true);
      return result;
    } catch (error) {
      observe?.(index, (performance.now() - started) / 1000, false);
      onError?.(error, index);
      throw toApiError(error);
    }
  }

  async function fetchLive(): Promise<GenerationDoc | undefined> {
    // The live alias as the elected master holds it, not as the node asked sees it: a node cut off
    // from the master serves reads on its last cluster state, and through the alias it answered a
    // generation already replaced (rehearsal seed 55555: live went back, during a partition, for
    // 3 s). A node that cannot reach the master fails the lookup (503; the client asks another
    // node) rather than answer it stale.
    const alias = aliasName(prefix, META_INDEX);
    const state = await timed(META_INDEX, async () => {
      for (let ask = 1; ; ask += 1) {
        try {
          const request = { metric: 'metadata', index: alias, filter_path: 'metadata.indices.*.aliases', master_timeout: `${MASTER_TIMEOUT_MS}ms` };
          // A little past the master's own deadline: its answer (no master, timed out) comes first where it can.
          return await client.cluster.state(request, { requestTimeout: MASTER_TIMEOUT_MS + 500 });
        } catch (error) {
          if (ask === LIVE_LOOKUP_TRIES || !(error instanceof errors.TimeoutError)) throw error;
        }
      }
    });
    const concrete = Object.keys(state.metadata?.indices ?? {})[0];
    if (concrete === undefined && !lastLive) return undefined;
    // No live alias is "nothing loaded yet" only until this gateway has seen a generation: after
    // that it is a failure (a prefix deleted), and the search of the alias below fails with
    // Elasticsearch's reason, answered 503 and logged like any other.
    const response = await timed(META_INDEX, () => client.search<GenerationDoc>({ index: concrete ?? alias, size: 1 }, { ignore: lastLive ? [] : [404] }));
    lastLive = response.hits?.hits[0]?._source;
    return lastLive;
  }

  const liveDoc = reusedFor(liveCacheMs, 1, fetchLive);
  const live = (): Promise<GenerationDoc | undefined> => liveDoc('').then(adopt);

  /** The generation to serve, given the live one: a new one once warmed (see WARM_REQUESTS). */
  function adopt(latest: GenerationDoc | undefined): GenerationDoc | undefined {
    if (!latest || !served || latest.generation === served.generation || warmRequests === 0 || hot.size === 0) {
      served = latest;
      warming = undefined;
      return latest;
    }
    if (warming !== latest.generation) {
      warming = latest.generation;
      void warm(served, latest).finally(() => {
        if (warming !== latest.generation) return;
        served = latest;
        warming = undefined;
      });
    }
    return served;
  }

  /** Runs the most asked expensive searches on `to`, while `from` (if still kept) answers. */
  async function warm(from: GenerationDoc, to: GenerationDoc): Promise<void> {
    const kept = await client.indices.exists({ index: indexName(prefix, META_INDEX, from.generation) }).catch(() => false);
    if (!kept) return;
    // Admitted as a client of its own: a quarter of the slots at most, beside clients' searches.
    const reader = readerOf(to, false, ticketOf('warm-up'), false);
    const deadline = performance.now() + WARM_MAX_MS;
    // One at a time, most asked first: sent together they would fill Elasticsearch's search
    // threads, and clients' searches on the served generation would queue behind them (at 10 M
    // events the answers during the warm-up were the slowest of an update).
    for (const request of hot.take(warmRequests)) {
      const left = deadline - performance.now();
      if (left <= 0) return;
      const run = request.rows ? reader.searchRows(request.index, request.body) : reader.search(request.index, request.body);
      await Promise.race([run.catch(() => undefined), sleep(left, undefined, { ref: false })]);
    }
  }

  const goneCursor = () =>
    ApiError.badParameter('cursor', 'This cursor belongs to an index generation that is no longer served. Start again from the first page.');

  /**
   * A kept (not live) generation's document, reused for as long as the live one is (a later load
   * may drop it: a read of a generation dropped meanwhile fails as its searches do). Every page of
   * a cursor or a pinned `bundle=` asks for it: read once a second, not once a page.
   */
  const generationDoc = reusedFor(liveCacheMs, KEPT_DOCS_CACHED, async (generation) => {
    const response = await timed(META_INDEX, () => client.get<GenerationDoc>({ index: indexName(prefix, META_INDEX, generation), id: generation }, { ignore: [404] }));
    if (!response.found || !response._source) throw goneCursor();
    return response._source;
  });
  /** The kept generations, reused as the live one is (every pinned read asks). */
  const kept = reusedFor(liveCacheMs, 1, readKept);

  async function readKept(): Promise<KeptGeneration[]> {
    const response = await timed(META_INDEX, () =>
      client.search<KeptGeneration>(
        { index: `${prefix}-${META_INDEX}-*`, size: MAX_KEPT, sort: [{ generation: 'desc' }], _source: ['generation', 'bundleId', 'loadedAt'], ignore_unavailable: true },
        { ignore: [404] },
      ),
    );
    return (response.hits?.hits ?? []).flatMap((hit) => (hit._source ? [hit._source] : []));
  }

  const counts = new LRUCache<string, Count>({ maxSize: COUNT_CACHE_BYTES, sizeCalculation: (_, key) => key.length + 64 });
  const countKey = (generation: string, index: IndexName, query: estypes.QueryDslQueryContainer, upTo: boolean | number) => `${generation} ${index} ${upTo} ${JSON.stringify(query)}`;

  /** A search answered as rows and sort values: streamed, since the client would otherwise decode and parse the whole page. */
  async function searchRaw(request: estypes.SearchRequest): Promise<RawPage> {
    const response = await client.search(request, { asStream: true, meta: true });
    const bytes = await collect(response.body as unknown as NodeJS.ReadableStream);
    if (response.statusCode !== null && response.statusCode >= 400) throw new errors.ResponseError({ ...response, body: parseError(bytes) } as never);
    return rawHits(bytes);
  }

  /** A reader of `generation`; the live one's expensive searches are noted (`record`) for the next warm-up. */
  function readerOf(generation: GenerationDoc, live: boolean, ticket: Ticket, record = live): Reader {
    const read = <T>(index: IndexName, call: () => Promise<T>) => timed(index, call, ticket);
    const name = (index: IndexName) => concreteIndex(prefix, generation, index);
    const inDocValues = (index: IndexName) => rowsInDocValuesOf(generation, index);
    /** A search of this generation; a kept one may be dropped by a load between the lookup and the search. */
    async function searchOn<T>(index: IndexName, call: () => Promise<T>): Promise<T> {
      try {
        return await read(index, call);
      } catch (error) {
        if (!live && error instanceof ApiError && error.code === 'unavailable') throw goneCursor();
        throw error;
      }
    }
    /** Hits of an index whose rows are doc values, by id (a search: doc values have no realtime get; a served generation is refreshed). */
    async function byIds(index: IndexName, ids: string[], storedFields: string[] | '_none_'): Promise<Hit[]> {
      const response = await read(index, () =>
        client.search({ index: name(index), ...rowsOfIds(ids, true, storedFields) }),
      );
      return response.hits.hits as Hit[];
    }
    /** The index, and its changes index where asked and the generation has one. */
    const names = (index: IndexName, options?: RowsOptions) => {
      const changes = options?.withChanges ? generation.changes?.[index] : undefined;
      return changes ? `${name(index)},${changes}` : name(index);
    };
    return {
      generation,
      indexName: name,
      async removedAt(index, id, fields = ['id']) {
        const changes = generation.changes?.[index];
        if (!changes || !generation.indexedAt) return undefined;
        const query = { bool: { filter: [{ bool: { should: fields.map((field) => ({ term: { [field]: id } })), minimum_should_match: 1 } }, { range: { [FIRST_SEEN]: { lte: generation.indexedAt, format: NANOS_FORMAT } } }] } };
        const response = await searchOn(index, () => client.search(rowRequest(generation, index, { index: changes, size: 1, query, ignore_unavailable: true })));
        const hit = response.hits.hits[0];
        const row = hit && rowOfHit(hit as Hit & { fields?: Record<string, unknown> });
        return row?.removed === true ? String(row.removedAt) : undefined;
      },
      async searchAcross(indices, body) {
        const names = new Map(indices.map((index) => [name(index), index]));
        // A generation loaded before an index existed lacks it: a missing index holds nothing to
        // find. Timed (metrics, admission) under its first index, as one request.
        const response = await searchOn(indices[0]!, () => client.search({ ...body, index: [...names.keys()].join(','), ignore_unavailable: true }));
        return response.hits.hits.flatMap((hit) => {
          const index = names.get(hit._index);
          return index ? [{ index, fields: (hit.fields ?? {}) as Record<string, unknown[]> }] : [];
        });
      },
      async search<T>(index: IndexName, body: SearchBody) {
        if (record) hot.record(index, body, false);
        const response = await searchOn(index, () => client.search<T>({ ...rowRequest(generation, index, body), index: name(index) }));
        if (inDocValues(index)) {
          for (const hit of response.hits?.hits ?? []) withSource(hit);
          for (const suggestions of Object.values(response.suggest ?? {})) for (const { options } of suggestions) for (const option of [options].flat()) withSource(option as Hit);
        }
        return response;
      },
      searchRows(index, body, options) {
        if (record && !options?.withChanges) hot.record(index, body, true);
        return searchOn(index, () => searchRaw({ ...rowRequest(generation, index, body), index: names(index, options), ...LIST_PARAMETERS }));
      },
      knownCount: (index, query, upTo) => counts.get(countKey(generation.generation, index, query, upTo)),
      rememberCount: (index, query, upTo, count) => void counts.set(countKey(generation.generation, index, query, upTo), count),
      async getMany<T>(index: IndexName, ids: string[]) {
        if (ids.length === 0) return [];
        if (inDocValues(index)) {
          const found = new Map((await byIds(index, ids, '_none_')).flatMap((hit) => {
            const row = rowOfHit(hit);
            return row ? [[String(row.id), { row } as T] as const] : [];
          }));
          return ids.flatMap((id) => (found.has(id) ? [found.get(id)!] : []));
        }
        const response = await read(index, () => client.mget<T>({ index: name(index), ids: ids.map(documentId) }));
        return response.docs.flatMap((doc) => ('found' in doc && doc.found && doc._source ? [doc._source] : []));
      },
      async getWithOriginal<T>(index: IndexName, id: string) {
        let hit: Hit | undefined;
        if (inDocValues(index)) {
          [hit] = await byIds(index, [id], ['original']);
          if (hit) withSource(hit);
        } else {
          const response = await read(index, () =>
            client.get<T>({ index: name(index), id: documentId(id), stored_fields: ['original'], _source: true }, { ignore: [404] }),
          );
          if (response.found) hit = response;
        }
        const original = hit && originalOfHit(hit);
        if (!hit?._source || original === undefined) return undefined;
        return { source: hit._source as T, original };
      },
      count: async (index, query) => (await read(index, () => client.count({ index: name(index), query }))).count,
      async *scan(index, body, { pageSize, countUpTo, withChanges }) {
        const { id } = await searchOn(index, () => client.openPointInTime({ index: names(index, { withChanges }), keep_alive: PIT_KEEP_ALIVE }));
        try {
          let after: unknown[] | undefined;
          for (let first = true; ; first = false) {
            const request = rowRequest(generation, index, { ...body, pit: { id, keep_alive: PIT_KEEP_ALIVE }, size: pageSize, track_total_hits: first ? countUpTo : false, ...(after && { search_after: after }) });
            const page = await searchOn(index, () => searchRaw(request));
            yield page;
            if (page.hits.length < pageSize) return;
            after = JSON.parse(page.hits.at(-1)!.sort!.toString('utf8')) as unknown[];
          }
        } finally {
          // Freed at once (a client that left need not hold Elasticsearch's view for a minute).
          await client.closePointInTime({ id }).catch(() => {});
        }
      },
    };
  }

  return {
    live,
    lastLive: () => lastLive,
    async reader(ticket, generation) {
      const current = await live();
      if (!current) throw ApiError.unavailable('No registry bundle is loaded yet.');
      if (generation === undefined || generation === current.generation) return readerOf(current, true, ticket);
      return readerOf(await generationDoc(generation), false, ticket);
    },
    async health() {
      const response = await timed('cluster', () => client.cluster.health({ timeout: '2s' }));
      return response.status;
    },
    async state<T>(id: string) {
      const response = await timed(STATE_INDEX, () => client.get<T>({ index: `${prefix}-${STATE_INDEX}`, id }, { ignore: [404] }));
      return response.found ? response._source : undefined;
    },
    kept: () => kept(''),
    async bundleRecords({ bundleId, limit, after, whole = false }) {
      const response = await timed(BUNDLES_INDEX, () =>
        client.search<BundleRecord>(
          {
            index: bundlesIndex(prefix),
            size: limit,
            track_total_hits: true,
            sort: [{ loadedAt: 'desc' }, { generation: 'desc' }],
            ...(bundleId !== undefined && { query: { term: { bundleId } } }),
            ...(after && { search_after: after as never }),
            ...(!whole && { _source: { excludes: ['manifest', 'catalog'] } }),
          },
          { ignore: [404] },
        ),
      );
      const loads = (response.hits?.hits ?? []).flatMap((hit) => (hit._source ? [{ record: hit._source, sort: hit.sort ?? [] }] : []));
      const total = response.hits?.total;
      return { loads, total: typeof total === 'number' ? total : (total?.value ?? 0) };
    },
  };
}
