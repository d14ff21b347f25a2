/**
 * What an answer was computed from, as headers: `Registry-Bundle-Id` and
 * `Registry-Bundle-Generated-At` on every answer a route read from a generation (JSON, CSV,
 * NDJSON, files, event streams), where `meta` cannot carry it. A route notes the bundle with
 * the generation it read (`ctx.state.bundle`). An event stream writes its own (src/stream/hub.ts).
 */
import type { Middleware } from 'koa';
import { bundleHeaderFields } from '../envelope.ts';
import type { CachingState } from './caching.ts';

export function bundleHeaders(): Middleware<CachingState> {
  return async (ctx, next) => {
    await next();
    if (ctx.state.bundle) ctx.set(bundleHeaderFields(ctx.state.bundle));
  };
}
