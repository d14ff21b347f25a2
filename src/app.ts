/**
 * The Koa application: middleware in order, then every route family.
 *
 *   request log → observe → CORS → errors → request line → rate limit → caching → (response cache: repeats) → compression → static pages → routes → 404
 *
 * The request log, CORS and timing sit outside the error handler so error responses carry
 * them too. The rate limit comes before anything that costs work (its 429 is rendered by the
 * error handler, with the RateLimit fields it set).
 */
import Router from '@koa/router';
import Koa from 'koa';
import compress from 'koa-compress';
import { autocompleteRoutes } from './routes/autocomplete.ts';
import type { AppRouter, AppState, RouteDeps } from './routes/context.ts';
import { currentRoutes } from './routes/current.ts';
import { entityRoutes } from './routes/entities.ts';
import { eventRoutes } from './routes/events.ts';
import { exportRoutes } from './routes/exports.ts';
import { bundleRoutes } from './routes/bundles.ts';
import { changeRoutes } from './routes/changes.ts';
import { killmailRoutes } from './routes/killmails.ts';
import { battleRoutes } from './routes/battles.ts';
import { openApiRoutes } from './routes/openapi.ts';
import { opsRoutes } from './routes/ops.ts';
import { provenanceRoutes } from './routes/provenance.ts';
import { resolveRoutes } from './routes/resolve.ts';
import { serviceRoutes } from './routes/service.ts';
import { streamRoutes } from './routes/stream.ts';
import { ApiError } from './errors.ts';
import { caching } from './http/middleware/caching.ts';
import { bundleHeaders } from './http/middleware/bundle-headers.ts';
import { cors } from './http/middleware/cors.ts';
import { errorHandler } from './http/middleware/errors.ts';
import { observeRequests } from './http/middleware/observe.ts';
import { rateLimit } from './http/middleware/rate-limit.ts';
import type { Limits } from './limits/decide.ts';
import type { CostClass } from './limits/request-cost.ts';
import { requestLog } from './http/middleware/request-log.ts';
import { requestPath } from './http/middleware/request-path.ts';
import type { ResponseCache } from './http/response-cache.ts';
import { staticPages } from './http/static.ts';

/** Route families, each in its own module under src/routes (streams before the detail routes that would take `stream` for an id). */
const ROUTE_FAMILIES = [serviceRoutes, entityRoutes, autocompleteRoutes, currentRoutes, streamRoutes, eventRoutes, killmailRoutes, battleRoutes, provenanceRoutes, resolveRoutes, opsRoutes, bundleRoutes, changeRoutes, exportRoutes, openApiRoutes];

/** Every route of the API on one router (the root and OpenAPI documents are written from it). */
export function createRouter(deps: RouteDeps): AppRouter {
  const router = new Router<AppState>();
  for (const family of ROUTE_FAMILIES) family(router, deps);
  return router;
}

/** What the gateway's limits and its response cache need besides the routes' dependencies (built in src/compose.ts). */
export interface AppLimits {
  /** Who is refused (src/limits/decide.ts). */
  limits: Limits;
  /** The cost class of the route a path matches. */
  costOf: (path: string) => CostClass | undefined;
  /** Repeated JSON reads answered from memory (src/http/response-cache.ts). */
  responseCache?: ResponseCache;
}

export function createApp(deps: RouteDeps, limits: AppLimits, router: AppRouter): Koa<AppState> {
  const app = new Koa<AppState>();
  // Koa's `proxy` trusts X-Forwarded-* from any peer: only when proxies are configured (the
  // rate limit's client identity reads forwarding headers from those proxies alone).
  app.proxy = deps.config.trustedProxies.length > 0;
  // Koa would print every error again; the error handler already logged what matters.
  app.silent = true;

  app.use(requestLog(deps.logger));
  app.use(observeRequests(deps.metrics));
  app.use(cors());
  app.use(errorHandler(deps.meta, deps.logger));
  app.use(requestPath());
  app.use(rateLimit({ limits: limits.limits, rules: deps.rules, costOf: limits.costOf }));
  app.use(caching());
  app.use(bundleHeaders());
  if (limits.responseCache) {
    const responses = { cache: limits.responseCache, live: async () => (await deps.search.live())?.generation };
    app.use(async (ctx, next) => {
      ctx.state.responses = responses;
      // A repeat of a URL already served is answered here, before compression, pages and routing.
      if ((ctx.method === 'GET' || ctx.method === 'HEAD') && responses.cache.knows(ctx.url)) {
        const live = await responses.live().catch(() => undefined);
        if (live !== undefined && responses.cache.answerKnown(ctx, live)) return;
      }
      return next();
    });
  }
  app.use(compress({ threshold: 1024, filter: (type) => /json|text/.test(type) }));
  // /explorer/ and /docs/ (web/dist), and browsers at `/` sent to the explorer; API clients get the root JSON.
  app.use(staticPages());
  app.use(router.routes());
  app.use(() => {
    throw ApiError.notFound();
  });
  return app;
}
