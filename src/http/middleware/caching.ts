/**
 * HTTP caching of JSON reads. A route that read the index sets `ctx.state.generation`; its
 * 200 answer then gets a short public `Cache-Control` and an ETag derived from the
 * generation and the URL (the answer cannot change while that generation is live), and a
 * matching `If-None-Match` gets 304. Everything else is `no-store` unless the route set its
 * own caching (exports). GET and HEAD answer the same headers.
 */
import { hash } from 'node:crypto';
import type { Middleware } from 'koa';
import { notModified } from '../conditional.ts';
import type { BundleStamp } from '../envelope.ts';

export interface CachingState {
  generation?: string;
  /** The bundle of that generation, for `meta` and the Registry-Bundle-* headers. */
  bundle?: BundleStamp;
}

export function caching(maxAgeSeconds = 30): Middleware<CachingState> {
  return async (ctx, next) => {
    await next();
    if (ctx.response.get('Cache-Control')) return;
    const generation = ctx.state.generation;
    if (ctx.status !== 200 || generation === undefined) {
      ctx.set('Cache-Control', 'no-store');
      return;
    }
    const tag = hash('sha256', `${generation} ${ctx.originalUrl}`, 'base64url').slice(0, 27);
    ctx.set('ETag', `W/"${tag}"`);
    ctx.set('Cache-Control', `public, max-age=${maxAgeSeconds}`);
    if (notModified(ctx)) {
      ctx.status = 304;
      ctx.body = null;
    }
  };
}
