/**
 * Service routes: `/v1/health` (the process is up; no ES call), `/v1` and `/` (what this
 * API is; its route list is read from the router, never hand-kept), `/v1/ready` (ES answers
 * and a generation is live) and `/metrics` + `/v1/metrics`.
 */
import { bundleOf, toEnvelope } from '../http/envelope.ts';
import { ApiError } from '../errors.ts';
import { type AppContext, type AppRouter, type RouteDeps, metaOf, noteRead } from './context.ts';
import { one, route, templatePath } from './operation.ts';
import { ref } from './records.ts';

/** Router paths as the reference advertises them: `{param}` instead of `:param`. */
export function advertisedRoutes(router: AppRouter): string[] {
  const paths = router.stack.filter((layer) => layer.methods.includes('GET')).map((layer) => templatePath(String(layer.path)));
  // Like the reference: every route but the root document itself (`/v1`, `/`).
  return [...new Set(paths)].filter((p) => p !== '/v1' && p !== '/');
}

export function serviceRoutes(router: AppRouter, deps: RouteDeps): void {
  const { config, search, meta, metrics, stopping } = deps;

  route(router, '/v1/health', { summary: 'The process is up (no Elasticsearch call)', query: [], answer: one(ref('Health')), readsIndex: false, cost: 'probe' }, (ctx) => {
    ctx.body = toEnvelope({ status: 'ok', time: new Date().toISOString() }, meta);
  });

  const root = async (ctx: AppContext) => {
    const live = await search.live().catch(() => undefined);
    // Cached like any read of the live generation (the reference cached the root for 30 s).
    if (live) noteRead(ctx, live);
    ctx.body = toEnvelope(
      {
        name: 'Registry Query Gateway',
        version: 'v1',
        source: 'Read-only API over the registry export bundle, served from Elasticsearch.',
        defaultEnvironment: config.defaultEnvironment,
        currentCycle: live?.currentCycle ?? null,
        generation: live?.generation ?? null,
        bundleId: live?.bundleId ?? null,
        generatedAt: live?.generatedAt ?? null,
        endpoints: advertisedRoutes(router),
      },
      metaOf(ctx, deps),
    );
  };
  const about = { summary: 'What this API is, and every route', query: [], answer: one(ref('Root')), readsIndex: false, conditional: true } as const;
  route(router, '/v1', about, root);
  route(router, '/', about, root);

  const ready = { summary: 'Elasticsearch answers and a generation is live (else 503, degraded)', query: [], answer: one(ref('Ready'), { degraded: true }), conditional: false, cost: 'probe' } as const;
  route(router, '/v1/ready', ready, async (ctx) => {
    // Stopping (SIGTERM): load balancers take this gateway out while it finishes what is in flight.
    if (stopping?.()) throw ApiError.unavailable('The gateway is stopping.');
    let cluster: string;
    try {
      cluster = await search.health();
    } catch {
      throw ApiError.unavailable('Elasticsearch is not reachable.');
    }
    const live = await search.live();
    const ready = live !== undefined;
    if (live) ctx.state.bundle = bundleOf(live);
    ctx.status = ready ? 200 : 503;
    if (!ready) ctx.set('Retry-After', '5');
    ctx.body = toEnvelope(
      {
        status: ready ? 'ready' : 'degraded',
        manifest: ready,
        generation: live?.generation ?? null,
        bundleId: live?.bundleId ?? null,
        generatedAt: live?.generatedAt ?? null,
        publishedAt: live?.publishedAt ?? null,
        loadedAt: live?.loadedAt ?? null,
        indexedThrough: live?.indexedAt ?? null,
        cluster,
      },
      metaOf(ctx, deps),
    );
  });

  const scrape = async (ctx: AppContext) => {
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.scrape().catch(() => {
      // A worker's scrape is the sum over all workers (src/workers/metrics.ts): none rather than a part.
      throw ApiError.unavailable('The metrics of every worker could not be gathered; retry.');
    });
  };
  const metricsOperation = { summary: 'Prometheus metrics: row counts, request and Elasticsearch timings', query: [], answer: { kind: 'metrics' }, readsIndex: false } as const;
  route(router, '/metrics', metricsOperation, scrape);
  route(router, '/v1/metrics', metricsOperation, scrape);
}
