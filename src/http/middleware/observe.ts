/** Times every request into the duration histogram, labelled by the matched route pattern, never the raw URL. */
import type { Middleware } from 'koa';
import type { Metrics } from '../metrics.ts';
import { routePattern } from '../route-pattern.ts';

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
