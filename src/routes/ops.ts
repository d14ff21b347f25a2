/**
 * The live generation's operational documents, inside the envelope (`data` = the document's
 * own `data` member; the reference served three of the four unenveloped):
 * `/v1/ops/freshness`, `/v1/ops/cursors`, `/v1/ops/chain-coverage` (also at the reference's
 * `/v1/ops/sui-coverage`) and `/v1/ops/source-gaps`.
 */
import type { OpsDocumentName } from '../indices/all.ts';
import { toEnvelope } from '../http/envelope.ts';
import { ApiError } from '../errors.ts';
import { toInstant } from '../time/instant.ts';
import { GAPS_ENVIRONMENT } from '../query/route-parameters.ts';
import { type AppContext, type AppRouter, type RouteDeps, metaOf, requestReader } from './context.ts';
import { type Answer, one, route } from './operation.ts';
import { type SchemaName, ref } from './records.ts';

type Doc = Record<string, unknown>;

/** The registry's rule when it writes the export: an ingest at most 15 minutes old is live. */
const LIVE_WITHIN_SECONDS = 15 * 60;
/** Statuses the 15-minute rule computes; the others describe a kind of source, not an age. */
const AGE_STATUSES = new Set(['live_indexed', 'cached_snapshot', 'unknown']);
/** Most severe first (the reference sorted the strings descending: `none`, `info`, `actionable`). */
const SEVERITY_RANK: Record<string, number> = { actionable: 0, info: 1, none: 2 };

async function opsData(ctx: AppContext, deps: RouteDeps, name: OpsDocumentName): Promise<unknown> {
  const { generation } = await requestReader(ctx, deps.search);
  const document = generation.ops[name] as Doc | undefined;
  if (document === undefined) throw ApiError.notFound('Operations document not found.');
  return document !== null && typeof document === 'object' && 'data' in document ? document.data : document;
}

const rows = (data: unknown): Doc[] => (Array.isArray(data) ? (data as Doc[]) : []);

/**
 * Freshness rows as exported, plus their age now: the exported `stalenessStatus` was frozen
 * when the bundle was written (the reference's weak point 11).
 */
export function withAgeNow(row: Doc, now: number): Doc {
  // The export's grammar, strictly: a time that is not one (30 February) has no age, rather than Date's guess.
  const at = toInstant(row.lastSuccessfulIngest)?.ms;
  const ageSeconds = at === undefined ? null : Math.max(0, Math.floor((now - at) / 1000));
  const status = String(row.stalenessStatus ?? 'unknown');
  const stalenessNow = !AGE_STATUSES.has(status) ? status : ageSeconds === null ? 'unknown' : ageSeconds <= LIVE_WITHIN_SECONDS ? 'live_indexed' : 'cached_snapshot';
  return { ...row, ageSeconds, stalenessNow };
}

export function bySeverity(a: Doc, b: Doc): number {
  const rank = (row: Doc) => SEVERITY_RANK[String(row.severity)] ?? 3;
  return rank(a) - rank(b) || String(a.kind).localeCompare(String(b.kind)) || String(a.id).localeCompare(String(b.id));
}

/** An operations document route: no parameters unless given; 404 when the bundle lacks the document. */
const opsOperation = (summary: string, answer: Answer, query: readonly [] | readonly [typeof GAPS_ENVIRONMENT] = []) =>
  ({ summary, query, answer, mayBeMissing: true }) as const;
/** The rows of a document, not paged. */
const rowsOf = (name: SchemaName) => one({ type: 'array', items: ref(name) });

export function opsRoutes(router: AppRouter, deps: RouteDeps): void {
  // The age changes by the second: never cached, so never a 304.
  const freshness = { ...opsOperation('Ingest freshness per source, with its age now', rowsOf('Freshness')), conditional: false };
  route(router, '/v1/ops/freshness', freshness, async (ctx) => {
    const data = await opsData(ctx, deps, 'freshness');
    const now = Date.now();
    ctx.body = toEnvelope(rows(data).map((row) => withAgeNow(row, now)), metaOf(ctx, deps));
    // The age changes by the second: no shared caching.
    ctx.set('Cache-Control', 'no-store');
  });

  route(router, '/v1/ops/cursors', opsOperation('Ingest cursors', rowsOf('Cursor')), async (ctx) => {
    ctx.body = toEnvelope(rows(await opsData(ctx, deps, 'cursors')), metaOf(ctx, deps));
  });

  for (const path of ['/v1/ops/chain-coverage', '/v1/ops/sui-coverage']) {
    route(router, path, opsOperation('Chain coverage of the ingest', one(ref('ChainCoverage'))), async (ctx) => {
      ctx.body = toEnvelope(await opsData(ctx, deps, 'chainCoverage'), metaOf(ctx, deps));
    });
  }

  const sourceGaps = opsOperation('Known source gaps, most severe first', rowsOf('SourceGap'), [GAPS_ENVIRONMENT]);
  route(router, '/v1/ops/source-gaps', sourceGaps, async (ctx, { environment }) => {
    const gaps = rows(await opsData(ctx, deps, 'sourceGaps')).filter((row) => environment === undefined || row.environment === environment);
    ctx.body = toEnvelope([...gaps].sort(bySeverity), metaOf(ctx, deps));
  });
}
