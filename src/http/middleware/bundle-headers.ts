/**
 * What an answer was computed from, as headers: `Registry-Bundle-Id` and
 * `Registry-Bundle-Generated-At` on every answer a route read from a generation (JSON, CSV,
 * NDJSON, files, event streams), where `meta` cannot carry it. A route notes the bundle with
 * the generation it read (`ctx.state.bundle`). An event stream writes its own (src/stream/hub.ts).
 */
import type { Middleware } from 'koa';
import { BUNDLE_GENERATED_AT_HEADER, BUNDLE_ID_HEADER } from '../envelope.ts';
import type { CachingState } from './caching.ts';

export function bundleHeaders(): Middleware<CachingState> {
  return async (ctx, next) => {
    await next();
    const bundle = ctx.state.bundle;
    if (!bundle) return;
    ctx.set(BUNDLE_ID_HEADER, bundle.bundleId);
    if (bundle.generatedAt) ctx.set(BUNDLE_GENERATED_AT_HEADER, bundle.generatedAt);
  };
}
