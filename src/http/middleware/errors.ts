/**
 * The first middleware: renders every error in the one shape `{error: {code, message,
 * details?}, meta}` with `no-store`. ApiErrors are rendered as they are; anything else is
 * logged and becomes a bare 500 `internal_error` (no stack, no ES text reaches a client).
 */
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { type Meta, toErrorBody } from '../envelope.ts';
import { ApiError } from '../../errors.ts';

export function errorHandler(meta: Meta, logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (thrown) {
      const error = thrown instanceof ApiError ? thrown : ApiError.internal();
      if (!(thrown instanceof ApiError)) logger.error({ err: thrown, path: ctx.path }, 'unhandled error');
      ctx.status = error.status;
      ctx.set(error.headers);
      // Headers a route set for the body it meant to send do not describe the error body.
      for (const header of ['ETag', 'Last-Modified', 'Content-Encoding', 'Accept-Ranges']) ctx.remove(header);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = toErrorBody(error, meta);
    }
  };
}
