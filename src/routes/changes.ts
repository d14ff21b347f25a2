/**
 * `/v1/changes?from=<bundle>&to=<bundle>`: every row added, changed or removed between two kept
 * bundles, for every collection a bundle file feeds (facts and relations included), as
 * `{collection, id, change, before?, after?}` — `before` the row as `from` held it, `after` as
 * `to` holds it, each its exported line. Collections in load order, ids in keyword order within
 * each; computed by merging the two generations' documents in id order (src/query/changes.ts), so
 * it is exact on any number of shards and needs no record beyond the generations kept.
 *
 * A page reads at most SCAN_BATCHES batches of each generation: where few rows changed, a page can
 * hold fewer than `limit` (even none) and still have a `nextCursor`. The cursor holds both
 * generations, the collection and the last id; `meta.count` is the changes found through this
 * page, exact once there is no `nextCursor`.
 */
import type { estypes } from '@elastic/elasticsearch';
import { toEnvelope } from '../http/envelope.ts';
import { CHANGE_COLLECTIONS, INDICES, type IndexName } from '../indices/all.ts';
import { ROW_HASH, type Row } from '../indices/description.ts';
import { ApiError } from '../errors.ts';
import { CHANGE_KINDS, type Change, type ChangeKind, type Line, comparedThrough, mergeBatches } from '../query/changes.ts';
import { cursorScope, decodeCursor, encodeCursor } from '../query/cursor.ts';
import { CHANGE, CHANGE_COLLECTION, CURSOR, DEFAULT_LIMIT, FROM_BUNDLE, LIMIT, TO_BUNDLE } from '../query/route-parameters.ts';
import type { Reader } from '../search/search-service.ts';
import { type AppRouter, type RouteDeps, metaOf, noteRead, pinnedGeneration } from './context.ts';
import { listMeta } from './list-request.ts';
import { list, route } from './operation.ts';
import { ref } from './records.ts';

const PATH = '/v1/changes';
/** Ids read of each generation at a time. */
const BATCH = 1_000;
/** Batches of each generation one page reads at most: the cost of a page over rows that did not change. */
const SCAN_BATCHES = 10;
const DESCRIPTIONS = new Map<string, (typeof INDICES)[number]>(INDICES.map((d) => [d.name, d]));

interface Position {
  collection: number;
  after?: string;
}

/** One batch of a generation's ids and line hashes after `after`, and whether the index may hold more. */
async function batchOf(reader: Reader, index: IndexName, after: string | undefined): Promise<{ lines: Line[]; full: boolean }> {
  const response = await reader.search(index, {
    size: BATCH,
    _source: false,
    track_total_hits: false,
    sort: [{ id: 'asc' }],
    docvalue_fields: ['id', ROW_HASH],
    ignore_unavailable: true,
    ...(after !== undefined && { search_after: [after] }),
  });
  const lines = (response.hits.hits as estypes.SearchHit[]).map((hit) => ({ id: String(hit.fields?.id?.[0]), hash: String(hit.fields?.[ROW_HASH]?.[0]) }));
  return { lines, full: lines.length === BATCH };
}

/**
 * The exported rows of `ids` in a generation, by id: the stored line where the index's `row` is a
 * view derived at load time (`keepsLine`: killmails), else the row.
 */
async function rowsOf(reader: Reader, index: IndexName, ids: string[]): Promise<Map<string, Row>> {
  if (ids.length === 0) return new Map();
  const query = { terms: { id: ids } };
  const common = { size: ids.length, track_total_hits: false, query, ignore_unavailable: true } as const;
  if (DESCRIPTIONS.get(index)?.keepsLine) {
    const response = await reader.search(index, { ...common, _source: false, stored_fields: ['original'], docvalue_fields: ['id'] });
    return new Map(response.hits.hits.map((hit) => [String(hit.fields?.id?.[0]), JSON.parse(Buffer.from(String(hit.fields?.original?.[0]), 'base64').toString('utf8')) as Row]));
  }
  const response = await reader.search<{ row: Row }>(index, { ...common, docvalue_fields: ['id'] });
  return new Map(response.hits.hits.map((hit) => [String(hit.fields?.id?.[0]), hit._source!.row]));
}

/**
 * The changes after `position`, at most `limit` of the kinds asked, reading at most SCAN_BATCHES
 * batches a collection; where the next page starts (undefined: every collection was read).
 */
async function changesAfter(from: Reader, to: Reader, collections: readonly IndexName[], kinds: ReadonlySet<ChangeKind>, position: Position, limit: number) {
  const found: (Change & { collection: IndexName })[] = [];
  let { collection, after } = position;
  let batches = 0;
  while (collection < collections.length) {
    const index = collections[collection]!;
    const [a, b] = await Promise.all([batchOf(from, index, after), batchOf(to, index, after)]);
    batches += 1;
    const through = comparedThrough(a.lines, a.full, b.lines, b.full);
    for (const change of mergeBatches(a.lines, b.lines, through)) {
      if (!kinds.has(change.change)) continue;
      found.push({ ...change, collection: index });
      if (found.length === limit) return { found, next: { collection, after: change.id } };
    }
    if (through === undefined) {
      collection += 1;
      after = undefined;
    } else after = through;
    if (batches === SCAN_BATCHES && collection < collections.length) return { found, next: { collection, after } };
  }
  return { found, next: undefined };
}

export function changeRoutes(router: AppRouter, deps: RouteDeps): void {
  const { search, config } = deps;
  const operation = {
    summary: 'Every row added, changed or removed between two kept bundles',
    description:
      'Rows of every collection a bundle file feeds (facts and relations included), every environment: `added` (only `to` holds the id), `removed` (only `from` does), `changed` (another line); `before` and `after` are the exported rows. In collection order, then id. ' +
      `A page reads at most ${SCAN_BATCHES * BATCH} ids of each bundle, so it may hold fewer than \`limit\` changes (even none) and still have a \`nextCursor\`; \`meta.count\` is the changes found through this page, exact on the last. Both bundles must be kept (\`/v1/bundles\`, \`queryable\`).`,
    query: [FROM_BUNDLE, TO_BUNDLE, CHANGE_COLLECTION, CHANGE, LIMIT, CURSOR],
    answer: list(ref('Change')),
    pins: false,
    // A bundle never loaded here (404), or no longer kept (410).
    mayBeMissing: true,
    mayBeGone: true,
  } as const;
  route(router, PATH, operation, async (ctx, params) => {
    const limit = params.limit ?? DEFAULT_LIMIT;
    const collections = params.collection === undefined ? CHANGE_COLLECTIONS : CHANGE_COLLECTIONS.filter((c) => params.collection!.includes(c));
    const kinds = new Set<ChangeKind>(params.change ?? CHANGE_KINDS);
    const scope = cursorScope(PATH, { from: params.from, to: params.to, collection: params.collection, change: params.change });
    const cursor = params.cursor === undefined ? undefined : decodeCursor(params.cursor, scope, config.cursorSecret);
    const [fromGeneration, collection, after] = (cursor?.after ?? []) as [string?, number?, string?];
    const position = cursor && typeof fromGeneration === 'string' && Number.isSafeInteger(collection) && collection! >= 0 && collection! < collections.length && (typeof after === 'string' || after === null);
    if (cursor && !position) throw ApiError.badParameter('cursor', 'This cursor is not a position of /v1/changes. Start again from the first page.');
    const generations = cursor ? { from: fromGeneration!, to: cursor.generation } : await pair(params.from, params.to);
    const [from, to] = await Promise.all([search.reader(ctx.state.ticket, generations.from), search.reader(ctx.state.ticket, generations.to)]);
    noteRead(ctx, to.generation);
    const { found, next } = await changesAfter(from, to, collections, kinds, { collection: collection ?? 0, after: after ?? undefined }, limit);
    const before = new Map<IndexName, Map<string, Row>>();
    const now = new Map<IndexName, Map<string, Row>>();
    await Promise.all(
      collections.map(async (index) => {
        const here = found.filter((c) => c.collection === index);
        const [was, is] = await Promise.all([rowsOf(from, index, here.filter((c) => c.change !== 'added').map((c) => c.id)), rowsOf(to, index, here.filter((c) => c.change !== 'removed').map((c) => c.id))]);
        before.set(index, was);
        now.set(index, is);
      }),
    );
    const data = found.map(({ collection, id, change }) => ({
      collection,
      id,
      change,
      ...(change !== 'added' && { before: before.get(collection)!.get(id) ?? null }),
      ...(change !== 'removed' && { after: now.get(collection)!.get(id) ?? null }),
    }));
    const count = (cursor?.count?.value ?? 0) + found.length;
    const nextCursor = next && encodeCursor({ generation: to.generation.generation, after: [from.generation.generation, next.collection, next.after ?? null], count: { value: count, exact: false } }, scope, config.cursorSecret);
    const meta = listMeta(metaOf(ctx, deps), { value: count, exact: next === undefined }, { from: from.generation.bundleId, to: to.generation.bundleId });
    ctx.body = toEnvelope(data, meta, nextCursor);
  });

  /** The generations of `from` and `to` (default: the bundle before the live one, and the live one); `from` must be the older. */
  async function pair(fromId: string | undefined, toId: string | undefined): Promise<{ from: string; to: string }> {
    const kept = await search.kept();
    const to = toId === undefined ? kept[0]?.generation : await pinnedGeneration(search, toId, 'to');
    if (to === undefined) throw ApiError.unavailable('No registry bundle is loaded yet.');
    const toAt = kept.findIndex((k) => k.generation === to);
    const from = fromId === undefined ? kept[toAt + 1]?.generation : await pinnedGeneration(search, fromId, 'from');
    if (from === undefined) throw ApiError.badParameter('from', 'No bundle older than `to` is kept to compare with; name one with `from` (see /v1/bundles).');
    if (kept.findIndex((k) => k.generation === from) <= toAt) throw ApiError.badParameter('to', '`to` must name a bundle loaded after `from`.');
    return { from, to };
  }
}
