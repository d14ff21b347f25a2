/**
 * The status panel: readiness and the live generation (when it was loaded, the bundle it came
 * from), freshness of every ingest, source gaps by severity and chain coverage. Degraded states
 * are red or amber, always with a word (colour is never the only signal).
 */
import { RegistryError, getJson, type Row } from '../api.ts';
import { Failure, Loading, useAsync } from '../components/async.tsx';
import { type Column, RowsTable } from '../components/rows-table.tsx';
import { formatHash } from '../route.ts';

interface Status {
  ready: Row;
  freshness: Row[] | Error;
  gaps: Row[] | Error;
  coverage: Row | Error;
  bundles: Row[] | Error;
}

async function load(signal: AbortSignal): Promise<Status> {
  const settle = <T,>(promise: Promise<{ data: T }>) => promise.then((answer) => answer.data, (error: Error) => error);
  const ready = await fetch('/v1/ready', { headers: { Accept: 'application/json' }, signal }).then(async (response) => {
    const body = (await response.json().catch(() => undefined)) as { data?: Row; error?: { message: string } } | undefined;
    if (body?.data) return body.data;
    throw new RegistryError(response.status, 'unavailable', body?.error?.message ?? `HTTP ${response.status}`);
  });
  const [freshness, gaps, coverage, bundles] = await Promise.all([
    settle(getJson<Row[]>('/v1/ops/freshness', {}, signal)),
    settle(getJson<Row[]>('/v1/ops/source-gaps', {}, signal)),
    settle(getJson<Row>('/v1/ops/chain-coverage', {}, signal)),
    settle(getJson<Row[]>('/v1/bundles', { limit: BUNDLES_SHOWN }, signal)),
  ]);
  return { ready, freshness, gaps, coverage, bundles };
}

const TONE: Record<string, string> = {
  ready: 'ok', live: 'ok', live_indexed: 'ok', indexed: 'ok', info: 'info', static_cycle_data: 'info',
  degraded: 'bad', errored: 'bad', critical: 'bad', blocked: 'bad',
  cached_snapshot: 'warn', actionable: 'warn', limited: 'warn', not_seen: 'warn', range_blocked: 'warn', unknown: 'warn',
};

export function StatusWord({ value }: { value: unknown }) {
  const text = value === undefined || value === null ? 'unknown' : String(value);
  return <span class={`status-word tone-${TONE[text] ?? 'neutral'}`}>{text}</span>;
}

export function StatusPage() {
  const state = useAsync(load, []);
  return (
    <section aria-labelledby="status-title">
      <h1 id="status-title">Status</h1>
      {state.status === 'loading' ? <Loading what="the status" /> : null}
      {state.status === 'failed' ? <Failure error={state.error} /> : null}
      {state.status === 'done' ? <Panels status={state.value} /> : null}
    </section>
  );
}

/** The newest loads the bundle picker lists. */
const BUNDLES_SHOWN = 50;

function Panels({ status }: { status: Status }) {
  const { ready, freshness, gaps, coverage, bundles } = status;
  return (
    <div class="panels">
      <section class="panel" aria-labelledby="ready-title" data-testid="readiness">
        <h2 id="ready-title">Readiness</h2>
        <dl class="identity">
          <div>
            <dt>status</dt>
            <dd>
              <StatusWord value={ready.status} />
            </dd>
          </div>
          <div>
            <dt>generation</dt>
            <dd data-testid="generation">{String(ready.generation ?? '—')}</dd>
          </div>
          <div>
            <dt>loaded at</dt>
            <dd data-testid="loaded-at">{String(ready.loadedAt ?? '—')}</dd>
          </div>
          <div>
            <dt>bundle generated at</dt>
            <dd>{String(ready.generatedAt ?? '—')}</dd>
          </div>
          <div>
            <dt>bundle id</dt>
            <dd>
              <code class="id">{String(ready.bundleId ?? '—')}</code>
            </dd>
          </div>
          <div>
            <dt>cluster health</dt>
            <dd>
              <StatusWord value={ready.cluster === 'green' ? 'ready' : ready.cluster} />
            </dd>
          </div>
        </dl>
      </section>

      <section class="panel" aria-labelledby="bundles-title" data-testid="bundles">
        <h2 id="bundles-title">Bundles</h2>
        <p class="small muted">Every bundle loaded here, newest first. A kept one can be viewed as it was: every page then reads it, and its URL can be shared.</p>
        {bundles instanceof Error ? <Failure error={bundles} /> : <RowsTable class="rows" columns={BUNDLES} rows={bundles} rowKey={(row) => String(row.generation)} rowAttributes={(row) => ({ 'data-id': String(row.bundleId) })} />}
      </section>

      <section class="panel" aria-labelledby="freshness-title">
        <h2 id="freshness-title">Freshness</h2>
        {freshness instanceof Error ? (
          <Failure error={freshness} />
        ) : (
          <RowsTable class="rows" columns={FRESHNESS} rows={freshness} rowKey={(_, index) => index} />
        )}
      </section>

      <section class="panel" aria-labelledby="gaps-title">
        <h2 id="gaps-title">Source gaps</h2>
        {gaps instanceof Error ? (
          <Failure error={gaps} />
        ) : (
          <ul class="gaps">
            {gaps.map((gap) => (
              <li key={String(gap.id)}>
                <StatusWord value={gap.severity} /> <strong>{String(gap.summary ?? gap.kind)}</strong> <span class="muted small">{String(gap.environment ?? '')} · {String(gap.count ?? '')}</span>
                {gap.recommendedAction ? <div class="small">{String(gap.recommendedAction)}</div> : null}
              </li>
            ))}
          </ul>
        )}
      </section>

      <section class="panel" aria-labelledby="coverage-title">
        <h2 id="coverage-title">Chain coverage</h2>
        {coverage instanceof Error ? (
          <Failure error={coverage} />
        ) : (
          <>
            <p>
              Full coverage proven: <StatusWord value={coverage.fullCoverageProven ? 'ready' : 'degraded'} /> · {String(coverage.indexedTargets ?? 0)} of {String(coverage.targetCount ?? 0)} targets
              indexed, {String(coverage.erroredTargets ?? 0)} errored, {String(coverage.rangeBlockedTargets ?? 0)} range-blocked, {String(coverage.notSeenTargets ?? 0)} not seen.
            </p>
            <RowsTable class="rows" columns={COVERAGE} rows={(coverage.targets as Row[] | undefined) ?? []} rowKey={(_, index) => index} />
          </>
        )}
      </section>
    </div>
  );
}

const BUNDLES: Column<Row>[] = [
  { title: 'Bundle', cell: (row) => <code class="id">{String(row.bundleId).slice(0, 16)}</code>, rowHeader: true },
  { title: 'Generated', cell: (row) => String(row.generatedAt ?? '—') },
  { title: 'Loaded', cell: (row) => String(row.loadedAt) },
  {
    title: 'View',
    cell: (row) =>
      row.live ? <StatusWord value="live" /> : row.queryable ? <a href={formatHash('search', { bundle: String(row.bundleId) })} data-testid="pin">view this bundle</a> : <span class="muted">no longer kept</span>,
  },
];

const FRESHNESS: Column<Row>[] = [
  { title: 'Source', cell: (row) => <code class="id">{String(row.source)}</code>, attributes: { class: 'wrap' } },
  { title: 'Environment', cell: (row) => String(row.environment ?? '') },
  { title: 'Now', cell: (row) => <StatusWord value={row.stalenessNow} /> },
  { title: 'Age', cell: (row) => age(row.ageSeconds) },
  {
    title: 'Errors',
    cell: (row) => (row.errorCount ? <span title={String(row.lastErrorSummary ?? '')}>{String(row.errorCount)} · {String(row.lastErrorSummary ?? '')}</span> : '0'),
  },
];

const COVERAGE: Column<Row>[] = [
  {
    title: 'Target',
    cell: (target) => <code class="id">{String(target.moduleName ?? target.objectType ?? target.source ?? target.cursorId ?? '')}</code>,
    attributes: { class: 'wrap' },
  },
  { title: 'Kind', cell: (target) => String(target.kind ?? '') },
  { title: 'Status', cell: (target) => <StatusWord value={target.status} /> },
  { title: 'Rows', cell: (target) => (target.rowsProcessed === undefined ? '—' : Number(target.rowsProcessed).toLocaleString('en')), attributes: { class: 'num' } },
];

function age(seconds: unknown): string {
  if (typeof seconds !== 'number') return '—';
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86_400 * 3) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400).toLocaleString('en')} d`;
}
