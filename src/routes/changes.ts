/**
 * `/v1/changes?from=<bundle>&to=<bundle>`: every row added, changed or removed between two kept
 * bundles, for every collection a bundle file feeds (facts and relations included), as
 * `{collection, id, change, before?, after?}` — `before` the row as `from` held it, `after` as
 * `to` holds it, each its exported line. Collections in load order, ids in keyword order within
 * each; computed by merging the two generations' documents in id order (src/query/changes.ts), so
 * it is exact on any number of shards and needs no record beyond the generations kept.
 * `/v1/memberships` is the same merge over `belongs_to` pairs (character, tribe): who joined a
 * tribe and who left it between the two.
 *
 * A page reads at most SCAN_BATCHES batches of each generation: where few rows changed, a page can
 * hold fewer than `limit` (even none) and still have a `nextCursor`. The cursor holds both
 * generations, the collection and the last id; `meta.count` is the changes found through this
 * page, exact once there is no `nextCursor`. `format=csv|ndjson` answers every change as a file,
 * `select` keeps fields of each (without `before` and `after`, no row is read).
 */
import type { estypes } from '@elastic/elasticsearch';
import { toEnvelope } from '../http/envelope.ts';
import { CHANGE_COLLECTIONS, INDICES, type IndexName } from '../indices/all.ts';
import { ROW_HASH, type Row, originalOfHit } from '../indices/description.ts';
import { ApiError } from '../errors.ts';
import { CHANGE_KINDS, type Change, type ChangeKind, type Line, comparedThrough, mergeBatches } from '../query/changes.ts';
import { cursorScope, decodeCursor, encodeCursor } from '../query/cursor.ts';
import { CHANGE, CHANGE_COLLECTION, CHARACTER, CURSOR, DEFAULT_LIMIT, FORMAT, FROM_BUNDLE, LIMIT, TO_BUNDLE, TRIBE } from '../query/route-parameters.ts';
import { selectFields, selectParameter } from '../query/select.ts';
import type { Reader } from '../search/search-service.ts';
import { type AppContext, type AppRouter, type RouteDeps, metaOf, noteRead, pinnedGeneration } from './context.ts';
import { csvLine, fileBody, fileHeaders } from './download.ts';
import { listMeta } from './list-request.ts';
import { list, route } from './operation.ts';
import { fieldsOf, ref } from './records.ts';

/**
 * Ids read of each generation at a time: Elasticsearch's most (`index.max_result_window`): fewer,
 * larger batches walk faster, each search sorting the index once.
 */
const BATCH = 10_000;
/** Batches of each generation one page reads at most: the cost of a page over rows that did not change. */
const SCAN_BATCHES = 1;
/** Changes a file answer renders at a time (their rows read of both generations in one search each). */
const FILE_ROWS = 500;
const CHANGE_FIELDS = fieldsOf('Change');
const MEMBERSHIP_FIELDS = fieldsOf('Membership');
const DESCRIPTIONS = new Map<string, (typeof INDICES)[number]>(INDICES.map((d) => [d.name, d]));

/** Where a page starts: the part (a collection's index in the route's list; memberships have one) and the last key read. */
interface Position {
  part: number;
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
    return new Map(response.hits.hits.map((hit) => [String(hit.fields?.id?.[0]), originalOfHit(hit)!]));
  }
  const response = await reader.search<{ row: Row }>(index, { ...common, docvalue_fields: ['id'] });
  return new Map(response.hits.hits.map((hit) => [String(hit.fields?.id?.[0]), hit._source!.row]));
}

/** One batch of a generation's keys after `after` in part `part` (a collection), and whether the part may hold more. */
type BatchReader = (reader: Reader, part: number, after: string | undefined) => Promise<{ lines: Line[]; full: boolean }>;

/** The changes found turned into the rows answered, reading what they need of the two generations. */
type Render<T> = (found: (Change & { part: number })[], from: Reader, to: Reader) => Promise<T[]>;

interface PageParams {
  from?: string;
  to?: string;
  cursor?: string;
  limit?: number;
}

/**
 * The changes after `position` among `parts` parts read by `read`, at most `limit` of the kinds
 * asked, reading at most SCAN_BATCHES batches; where the next page starts (undefined: all read).
 */
async function changesAfter(from: Reader, to: Reader, parts: number, read: BatchReader, kinds: ReadonlySet<ChangeKind>, position: Position, limit: number) {
  const found: (Change & { part: number })[] = [];
  let { part, after } = position;
  let batches = 0;
  while (part < parts) {
    const [a, b] = await Promise.all([read(from, part, after), read(to, part, after)]);
    batches += 1;
    const through = comparedThrough(a.lines, a.full, b.lines, b.full);
    for (const change of mergeBatches(a.lines, b.lines, through)) {
      if (!kinds.has(change.change)) continue;
      found.push({ ...change, part });
      if (found.length === limit) return { found, next: { part, after: change.id } };
    }
    if (through === undefined) {
      part += 1;
      after = undefined;
    } else after = through;
    if (batches === SCAN_BATCHES && part < parts) return { found, next: { part, after } };
  }
  return { found, next: undefined };
}

/** Between the two parts of a membership's key (no id holds it): its bytes sort a pair as Elasticsearch sorts the two fields. */
const PAIR = '\u0000';

/**
 * One batch of `belongs_to` pairs (character, tribe) under `filter`, each pair once however many
 * sources state it: sorted by the two fields, with no id to break ties, so that `search_after` a
 * pair skips every other relation of that pair (which only says the pair again).
 */
async function pairsOf(reader: Reader, filter: estypes.QueryDslQueryContainer[], after: string | undefined): Promise<{ lines: Line[]; full: boolean }> {
  const response = await reader.search('relations', {
    size: BATCH,
    _source: false,
    track_total_hits: false,
    query: { bool: { filter } },
    sort: [{ subjectEntityId: 'asc' }, { objectEntityId: 'asc' }],
    docvalue_fields: ['subjectEntityId', 'objectEntityId'],
    ignore_unavailable: true,
    ...(after !== undefined && { search_after: after.split(PAIR) }),
  });
  const hits = response.hits.hits as estypes.SearchHit[];
  const keys = hits.map((hit) => `${String(hit.fields?.subjectEntityId?.[0])}${PAIR}${String(hit.fields?.objectEntityId?.[0])}`);
  const lines = keys.filter((key, i) => key !== keys[i - 1]).map((id) => ({ id, hash: '' }));
  return { lines, full: hits.length === BATCH };
}

/** The position a cursor of these routes holds, checked: the `from` generation, the part, the last key. */
function positionOf(after: unknown[] | undefined, parts: number): { from: string; position: Position } | undefined {
  if (after === undefined) return undefined;
  const [from, part, key] = after as [unknown, unknown, unknown];
  const valid = typeof from === 'string' && Number.isSafeInteger(part) && (part as number) >= 0 && (part as number) < parts && (typeof key === 'string' || key === null);
  if (!valid) throw ApiError.badParameter('cursor', 'This cursor is not a position of this route. Start again from the first page.');
  return { from, position: { part: part as number, after: (key as string | null) ?? undefined } };
}

export function changeRoutes(router: AppRouter, deps: RouteDeps): void {
  const { search, config } = deps;
  const scanned = `A page reads at most ${SCAN_BATCHES * BATCH} keys of each bundle, so it may hold fewer than \`limit\` rows (even none) and still have a \`nextCursor\`; \`meta.count\` is the rows found through this page, exact on the last. Both bundles must be kept (\`/v1/bundles\`, \`queryable\`). With \`format\`, the whole difference as a file: walked before the first byte, so \`X-Total-Count\` is exact.`;
  // A page is up to 2 × SCAN_BATCHES searches: charged as a search.
  const common = { pins: false, mayBeMissing: true, mayBeGone: true, cost: 'search' } as const;

  /** The readers of the request's two generations: the pair a cursor holds, else the parameters'. */
  async function readersOf(ctx: AppContext, params: { from?: string; to?: string }, resumed?: { from: string; to: string }): Promise<[Reader, Reader]> {
    const generations = resumed ?? (await pair(params.from, params.to));
    const readers = await Promise.all([search.reader(ctx.state.ticket, generations.from), search.reader(ctx.state.ticket, generations.to)]);
    noteRead(ctx, readers[1].generation);
    return readers;
  }

  /**
   * One page of what changed between the request's two bundles: the pair from the cursor or the
   * parameters, the merge after the cursor's position, `render` turning the changes into rows.
   */
  async function changePage<T>(ctx: AppContext, params: PageParams, scope: string, parts: number, read: BatchReader, kinds: ReadonlySet<ChangeKind>, render: Render<T>) {
    const cursor = params.cursor === undefined ? undefined : decodeCursor(params.cursor, scope, config.cursorSecret);
    const resumed = positionOf(cursor?.after, parts);
    const [from, to] = await readersOf(ctx, params, resumed && { from: resumed.from, to: cursor!.generation });
    const { found, next } = await changesAfter(from, to, parts, read, kinds, resumed?.position ?? { part: 0 }, params.limit ?? DEFAULT_LIMIT);
    const count = (cursor?.count?.value ?? 0) + found.length;
    const nextCursor = next && encodeCursor({ generation: to.generation.generation, after: [from.generation.generation, next.part, next.after ?? null], count: { value: count, exact: false } }, scope, config.cursorSecret);
    // The two ends with their instants: a row joined, changed or left between them.
    const ends = { from: from.generation.bundleId, fromGeneratedAt: from.generation.generatedAt ?? null, to: to.generation.bundleId, toGeneratedAt: to.generation.generatedAt ?? null };
    const meta = listMeta(metaOf(ctx, deps), { value: count, exact: next === undefined }, ends);
    ctx.body = toEnvelope(await render(found, from, to), meta, nextCursor);
  }

  /**
   * Every change between the two bundles as a file (`format`): the merge walked whole first (ids
   * and line hashes only), so that `X-Total-Count` is exact before the first byte, then the rows
   * read and written FILE_ROWS changes at a time. At most DOWNLOAD_MAX_ROWS, as every list's file.
   */
  async function changeFile<T extends object>(ctx: AppContext, params: PageParams & { format: 'csv' | 'ndjson' }, file: { route: string; bind: Record<string, unknown>; columns: readonly string[] }, parts: number, read: BatchReader, kinds: ReadonlySet<ChangeKind>, render: Render<T>) {
    const [from, to] = await readersOf(ctx, params);
    const cap = config.downloadMaxRows;
    const found: (Change & { part: number })[] = [];
    for (let position: Position | undefined = { part: 0 }; position && found.length <= cap; ) {
      const page = await changesAfter(from, to, parts, read, kinds, position, cap + 1 - found.length);
      found.push(...page.found);
      position = page.next;
    }
    const { format } = params;
    fileHeaders(ctx, { route: file.route, bind: file.bind, format, total: found.length, cap });
    if (ctx.method === 'HEAD') {
      ctx.body = '';
      return;
    }
    const line = (row: T) => (format === 'csv' ? csvLine(file.columns.map((column) => (row as Record<string, unknown>)[column])) : `${JSON.stringify(row)}\n`);
    const kept = found.slice(0, cap);
    ctx.body = fileBody(ctx, deps, file.route, async function* () {
      if (format === 'csv') yield csvLine(file.columns);
      for (let at = 0; at < kept.length; at += FILE_ROWS) yield (await render(kept.slice(at, at + FILE_ROWS), from, to)).map(line).join('');
    });
  }

  const changes = {
    ...common,
    summary: 'Every row added, changed or removed between two kept bundles',
    description:
      'Rows of every collection a bundle file feeds (facts and relations included), every environment: `added` (only `to` holds the id), `removed` (only `from` does), `changed` (another line); `before` and `after` are the exported rows. In collection order, then id. ' +
      scanned,
    query: [FROM_BUNDLE, TO_BUNDLE, CHANGE_COLLECTION, CHANGE, selectParameter(CHANGE_FIELDS), LIMIT, CURSOR, FORMAT],
    answer: list(ref('Change')),
  } as const;
  route(router, '/v1/changes', changes, async (ctx, params) => {
    const collections = params.collection === undefined ? CHANGE_COLLECTIONS : CHANGE_COLLECTIONS.filter((c) => params.collection!.includes(c));
    const bind = { from: params.from, to: params.to, collection: params.collection, change: params.change };
    const read: BatchReader = (reader, part, after) => batchOf(reader, collections[part]!, after);
    const kinds = new Set(params.change ?? CHANGE_KINDS);
    const fields = params.select;
    // The rows of each side are read only when asked for.
    const [wantsBefore, wantsAfter] = [!fields || fields.includes('before'), !fields || fields.includes('after')];
    const render: Render<Record<string, unknown>> = async (found, from, to) => {
      const rows = await Promise.all(
        collections.map(async (index, part) => {
          const here = found.filter((c) => c.part === part);
          const ids = (side: ChangeKind) => here.filter((c) => c.change !== side).map((c) => c.id);
          return Promise.all([wantsBefore ? rowsOf(from, index, ids('added')) : new Map<string, Row>(), wantsAfter ? rowsOf(to, index, ids('removed')) : new Map<string, Row>()]);
        }),
      );
      return found.map(({ part, id, change }) => {
        const row = {
          collection: collections[part]!,
          id,
          change,
          ...(change !== 'added' && { before: rows[part]![0].get(id) ?? null }),
          ...(change !== 'removed' && { after: rows[part]![1].get(id) ?? null }),
        };
        return fields ? selectFields(row, fields) : row;
      });
    };
    if (params.format) {
      const columns = fields ? ['id', ...fields.filter((f) => f !== 'id')] : CHANGE_FIELDS;
      await changeFile(ctx, { ...params, format: params.format }, { route: '/v1/changes', bind, columns }, collections.length, read, kinds, render);
      return;
    }
    await changePage(ctx, params, cursorScope('/v1/changes', bind), collections.length, read, kinds, render);
  });

  const memberships = {
    ...common,
    summary: 'Who joined and who left a tribe between two kept bundles',
    description:
      "A character's `belongs_to` a tribe, by any source, in `to` and by none in `from` (`joined`), or the other way round (`left`); a new source of a membership already held is no change. By character, then tribe. Every environment. " +
      scanned,
    query: [FROM_BUNDLE, TO_BUNDLE, TRIBE, CHARACTER, LIMIT, CURSOR, FORMAT],
    answer: list(ref('Membership')),
  } as const;
  route(router, '/v1/memberships', memberships, async (ctx, params) => {
    const filter: estypes.QueryDslQueryContainer[] = [{ term: { predicate: 'belongs_to' } }, ...(params.tribe ? [{ terms: { objectEntityId: [...params.tribe] } }] : []), ...(params.character ? [{ terms: { subjectEntityId: [...params.character] } }] : [])];
    const bind = { from: params.from, to: params.to, tribe: params.tribe, character: params.character };
    const read: BatchReader = (reader, _part, after) => pairsOf(reader, filter, after);
    const kinds = new Set<ChangeKind>(['added', 'removed']);
    const render: Render<Record<string, unknown>> = async (found) =>
      found.map(({ id, change }) => {
        const [characterId, tribeId] = id.split(PAIR);
        return { characterId, tribeId, change: change === 'added' ? 'joined' : 'left' };
      });
    if (params.format) {
      await changeFile(ctx, { ...params, format: params.format }, { route: '/v1/memberships', bind, columns: MEMBERSHIP_FIELDS }, 1, read, kinds, render);
      return;
    }
    await changePage(ctx, params, cursorScope('/v1/memberships', bind), 1, read, kinds, render);
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
