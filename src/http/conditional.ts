/**
 * Conditional GET at the origin (RFC 9110 §13.2.2): `If-None-Match` (weak comparison), else
 * `If-Modified-Since` against `Last-Modified`. Unlike Koa's `ctx.fresh`, a request's
 * `Cache-Control: no-cache` does not disable it: that directive is for caches, and fetch()
 * adds it to every conditional request it is given.
 */
import type { Context } from 'koa';

const opaque = (tag: string) => tag.trim().replace(/^W\//, '');

export function notModified(ctx: Pick<Context, 'method' | 'get' | 'response'>): boolean {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return false;
  const ifNoneMatch = ctx.get('If-None-Match');
  if (ifNoneMatch) {
    const etag = ctx.response.get('ETag');
    if (!etag) return false;
    return ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((tag) => opaque(tag) === opaque(etag));
  }
  const since = Date.parse(ctx.get('If-Modified-Since'));
  const modified = Date.parse(ctx.response.get('Last-Modified'));
  return !Number.isNaN(since) && !Number.isNaN(modified) && modified <= since;
}
