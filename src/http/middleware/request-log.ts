/**
 * The request log: one `info` line per request once its response is done (a streamed export
 * counts until its last byte): method, route pattern, status, milliseconds and the generation
 * that answered. The route pattern, never the raw URL: URLs carry ids and search text, and a
 * pattern keeps the log groupable. `LOG_LEVEL=warn` turns it off. Errors are logged where they
 * happen (errors.ts, the search boundary), not here.
 */
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { CachingState } from './caching.ts';
import { routePattern } from '../route-pattern.ts';

export function requestLog(logger: Logger): Middleware<CachingState> {
  return async (ctx, next) => {
    if (!logger.isLevelEnabled('info')) return next();
    const started = performance.now();
    // `close` comes for every response, also one the client abandoned half way.
    ctx.res.once('close', () => {
      const line = {
        method: ctx.method,
        route: routePattern(ctx),
        status: ctx.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        generation: ctx.state.generation,
        ...(ctx.res.writableFinished ? {} : { aborted: true }),
      };
      logger.info(line, 'request');
    });
    await next();
  };
}
