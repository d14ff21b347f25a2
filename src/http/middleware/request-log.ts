/**
 * The request log: one `info` line per request once its response is done (a streamed export
 * counts until its last byte): method, route pattern, status, milliseconds, the generation that
 * answered, and the client's `X-Request-Id` where it sent one. The route pattern, never the raw
 * URL: URLs carry ids and search text, and a pattern keeps the log groupable. At `debug`, also a
 * line as each request is read (`request read`, with its id): a request read and never answered
 * then shows as a read line without its answer line (the rehearsal checks exactly that).
 * `LOG_LEVEL=warn` turns both off. Errors are logged where they happen (errors.ts, the search
 * boundary), not here.
 */
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { CachingState } from './caching.ts';
import { routePattern } from '../route-pattern.ts';

/** A client's request id as logged: printable, at most this long; anything else is not logged. */
const REQUEST_ID = /^[\x21-\x7e]{1,64}$/;

export function requestLog(logger: Logger): Middleware<CachingState> {
  return async (ctx, next) => {
    if (!logger.isLevelEnabled('info')) return next();
    const started = performance.now();
    const sent = ctx.get('X-Request-Id');
    const id = REQUEST_ID.test(sent) ? { requestId: sent } : {};
    logger.debug({ method: ctx.method, ...id }, 'request read');
    // `close` comes for every response, also one the client abandoned half way.
    ctx.res.once('close', () => {
      const line = {
        method: ctx.method,
        route: routePattern(ctx),
        status: ctx.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        generation: ctx.state.generation,
        ...id,
        ...(ctx.res.writableFinished ? {} : { aborted: true }),
      };
      logger.info(line, 'request');
    });
    await next();
  };
}
