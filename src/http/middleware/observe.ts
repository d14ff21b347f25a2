/** Times every request into the duration histogram, labelled by the matched route pattern, never the raw URL. */
import type { Context, Middleware } from 'koa';
import type { Metrics } from '../metrics.ts';

/** The route pattern @koa/router matched (`/v1/entities/:idOrSlug`), or `unmatched`. */
export function routePattern(ctx: Context): string {
  return String((ctx as Context & { _matchedRoute?: string })._matchedRoute ?? 'unmatched');
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
