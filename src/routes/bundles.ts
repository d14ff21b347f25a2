/**
 * The bundles loaded here: `/v1/bundles`, every load that went live, newest first, and
 * `/v1/bundles/{bundleId}`, one bundle with its manifest, catalog and (while kept) operations
 * documents. Read from the bundle record (src/indices/bundles.ts) and the kept generations; a
 * kept bundle answers any read route with `bundle=` (context.ts `pinnedGeneration`) and serves
 * its files under `/v1/bundles/{bundleId}/exports/` (exports.ts).
 */
import { toEnvelope } from '../http/envelope.ts';
import type { BundleRecord } from '../indices/bundles.ts';
import type { GenerationDoc } from '../indices/generation.ts';
import { ApiError } from '../errors.ts';
import { type SortValue, decodeCursor, encodeCursor } from '../query/cursor.ts';
import { CURSOR, DEFAULT_LIMIT, LIMIT } from '../query/route-parameters.ts';
import type { KeptGeneration } from '../search/search-service.ts';
import { type AppRouter, type RouteDeps, metaOf, noteRead, requestReader } from './context.ts';
import { listMeta } from './list-request.ts';
import { list, one, route } from './operation.ts';
import { ref } from './records.ts';

const LIST = '/v1/bundles';

/** A load as `/v1/bundles` lists it. */
function loadOf(record: BundleRecord, kept: readonly KeptGeneration[], live: GenerationDoc | undefined) {
  const { bundleId, generation, generatedAt, publishedAt, loadedAt, counts } = record;
  return {
    bundleId,
    generation,
    generatedAt: generatedAt ?? null,
    publishedAt: publishedAt ?? null,
    loadedAt,
    counts,
    live: live?.generation === generation,
    queryable: kept.some((k) => k.generation === generation),
  };
}

export function bundleRoutes(router: AppRouter, deps: RouteDeps): void {
  const { search, config } = deps;
  const listing = { summary: 'Every bundle loaded here, newest load first', query: [LIMIT, CURSOR], answer: list(ref('Bundle')), pins: false } as const;
  route(router, LIST, listing, async (ctx, params) => {
    const limit = params.limit ?? DEFAULT_LIMIT;
    const after = params.cursor === undefined ? undefined : decodeCursor(params.cursor, LIST, config.cursorSecret).after;
    const [live, kept, { loads, total }] = await Promise.all([search.live(), search.kept(), search.bundleRecords({ limit: limit + 1, after })]);
    // The list changes only when a load goes live: cached, and tagged, by the live generation.
    if (live) noteRead(ctx, live);
    const page = loads.slice(0, limit);
    const last = page.at(-1);
    const next = loads.length > limit && last ? encodeCursor({ generation: last.record.generation, after: last.sort as SortValue[] }, LIST, config.cursorSecret) : undefined;
    ctx.body = toEnvelope(page.map(({ record }) => loadOf(record, kept, live)), listMeta(metaOf(ctx, deps), { value: total, exact: true }), next);
  });

  const detail = { summary: 'One bundle loaded here: its last load, manifest, catalog and operations documents', query: [], answer: one(ref('BundleDetail')), pins: false } as const;
  route(router, `${LIST}/:bundleId`, detail, async (ctx) => {
    const bundleId = ctx.params.bundleId!;
    const [live, kept, { loads }] = await Promise.all([search.live(), search.kept(), search.bundleRecords({ bundleId, limit: 1, whole: true })]);
    const newest = loads[0]?.record;
    if (!newest) throw ApiError.bundleNotFound(bundleId);
    const load = loadOf(newest, kept, live);
    // Its operations documents are the generation's: there while it is kept.
    const ops = load.queryable ? (await requestReader(ctx, search, newest.generation)).generation.ops : null;
    if (!load.queryable && live) noteRead(ctx, live);
    ctx.body = toEnvelope({ ...load, manifest: newest.manifest, catalog: newest.catalog, ops }, metaOf(ctx, deps));
  });
}
