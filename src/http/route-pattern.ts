/**
 * The route a request is labelled with in the request log and on /metrics: the pattern
 * @koa/router matched (`/v1/entities/:idOrSlug`), never the raw URL with its ids or search text.
 */
import type { Context } from 'koa';

type Routed = Context & { _matchedRoute?: string };

/** The route pattern @koa/router matched (`/v1/entities/:idOrSlug`), or `unmatched`. */
export function routePattern(ctx: Context): string {
  return String((ctx as Routed)._matchedRoute ?? 'unmatched');
}

/** Names the route of a request no router matched (pages, answers given before routing). */
export function setRoutePattern(ctx: Context, pattern: string): void {
  (ctx as Routed)._matchedRoute = pattern;
}
