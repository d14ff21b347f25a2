/**
 * Request line checks before routing: methods other than GET, HEAD and OPTIONS → 405 with
 * `Allow`; a path or query with a malformed `%` escape → 400 (the reference answered 500);
 * trailing slashes are ignored (`/v1/entities/` is `/v1/entities`), as in the reference.
 */
import type { Middleware } from 'koa';
import { ApiError } from '../../errors.ts';

export const ALLOWED_METHODS = 'GET, HEAD, OPTIONS';

export function requestPath(): Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && ctx.method !== 'OPTIONS') throw ApiError.methodNotAllowed(ALLOWED_METHODS);
    try {
      decodeURIComponent(ctx.path);
      decodeURIComponent(ctx.querystring.replace(/\+/g, ' '));
    } catch {
      throw ApiError.badRequest('The URL has a malformed percent-escape.');
    }
    if (ctx.path.length > 1 && ctx.path.endsWith('/')) ctx.path = ctx.path.replace(/\/+$/, '') || '/';
    await next();
  };
}
