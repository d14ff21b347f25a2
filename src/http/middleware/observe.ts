/** Times every request into the duration histogram, labelled by the matched route pattern, never the raw URL. */
import type { Context, Middleware } from 'koa';
import type { Metrics } from '../metrics.ts';

/** The route pattern @koa/router matched (`/v1/entities/:idOrSlug`), or `unmatched`. */
export function routePattern(ctx: Context): string {
  return String((ctx as Context & { _matchedRoute?: string })._matchedRoute ?? 'unmatched');
}

/** Names the route of a request no router matched (pages, answers given before routing): the request log and metrics label requests by route pattern, never by raw URL. */
export function setRoutePattern(ctx: Context, pattern: string): void {
  (ctx as Context & { _matchedRoute?: string })._matchedRoute = pattern;
}

export function observeRequests(metrics: Metrics): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      metrics.observeRequest(routePattern(ctx), ctx.method, ctx.status, (performance.now() - started) / 1000);
    }
  };
}
