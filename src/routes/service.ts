/**
 * Service routes: `/v1/health` (the process is up; no ES call), `/v1` and `/` (what this
 * API is; its route list is read from the router, never hand-kept), `/v1/ready` (ES answers
 * and a generation is live) and `/metrics` + `/v1/metrics`.
 */
import { toEnvelope } from '../http/envelope.ts';
import { ApiError } from '../errors.ts';
import { takeParams } from '../query/params.ts';
import type { AppRouter, RouteDeps } from './context.ts';

/** Router paths as the reference advertises them: `{param}` instead of `:param`. */
export function advertisedRoutes(router: AppRouter): string[] {
  const paths = router.stack.filter((layer) => layer.methods.includes('GET')).map((layer) => String(layer.path).replace(/:(\w+)/g, '{$1}'));
  // Like the reference: every route but the root document itself (`/v1`, `/`).
  return [...new Set(paths)].filter((p) => p !== '/v1' && p !== '/');
}

export function serviceRoutes(router: AppRouter, deps: RouteDeps): void {
  const { config, search, meta, metrics } = deps;

  router.get('/v1/health', (ctx) => {
    takeParams(ctx.query, []);
    ctx.body = toEnvelope({ status: 'ok', time: new Date().toISOString() }, meta);
  });

  const root = async (ctx: Parameters<Parameters<AppRouter['get']>[1]>[0]) => {
    takeParams(ctx.query, []);
    const live = await search.live().catch(() => undefined);
    // Cached like any read of the live generation (the reference cached the root for 30 s).
    if (live) ctx.state.generation = live.generation;
    ctx.body = toEnvelope(
      {
        name: 'Registry Query Gateway',
        version: 'v1',
        source: 'Read-only API over the registry export bundle, served from Elasticsearch.',
        defaultEnvironment: config.defaultEnvironment,
        currentCycle: live?.currentCycle ?? null,
        generation: live?.generation ?? null,
        endpoints: advertisedRoutes(router),
      },
      meta,
    );
  };
  router.get('/v1', root);
  router.get('/', root);

  router.get('/v1/ready', async (ctx) => {
    takeParams(ctx.query, []);
    let cluster: string;
    try {
      cluster = await search.health();
    } catch {
      throw ApiError.unavailable('Elasticsearch is not reachable.');
    }
    const live = await search.live();
    const ready = live !== undefined;
    ctx.status = ready ? 200 : 503;
    if (!ready) ctx.set('Retry-After', '5');
    ctx.body = toEnvelope(
      {
        status: ready ? 'ready' : 'degraded',
        manifest: ready,
        generation: live?.generation ?? null,
        bundleId: live?.bundleId ?? null,
        generatedAt: live?.generatedAt ?? null,
        loadedAt: live?.loadedAt ?? null,
        cluster,
      },
      meta,
    );
  });

  const scrape = async (ctx: Parameters<Parameters<AppRouter['get']>[1]>[0]) => {
    takeParams(ctx.query, []);
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  };
  router.get('/metrics', scrape);
  router.get('/v1/metrics', scrape);
}
