/**
 * CORS as the reference does it, on every response (errors included): echo an http(s)
 * `Origin` (with `Vary: Origin`) or `*`; preflight `OPTIONS` on any path → 204. Added:
 * `Access-Control-Expose-Headers`, so browsers can read ETag, Retry-After, the RateLimit
 * fields, Content-Encoding and the bundle an answer was read from; `X-Api-Key` allowed (the rate limit's client identity).
 */
import type { Middleware } from 'koa';
import { BUNDLE_GENERATED_AT_HEADER, BUNDLE_ID_HEADER } from '../envelope.ts';

function allowedOrigin(origin: string | undefined): string | undefined {
  if (!origin) return undefined;
  try {
    const { protocol } = new URL(origin);
    return protocol === 'http:' || protocol === 'https:' ? origin : undefined;
  } catch {
    return undefined;
  }
}

/** The fields of an answer to a request without an `Origin` (the refusals before Koa send them too). */
export const CORS_FIELDS: Readonly<Record<string, string>> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
  'Access-Control-Allow-Headers': 'Content-Type, Range, If-None-Match, If-Modified-Since, X-Api-Key, Last-Event-ID',
  'Access-Control-Expose-Headers': `ETag, Retry-After, RateLimit, RateLimit-Policy, Content-Encoding, Content-Length, Content-Range, Accept-Ranges, Last-Modified, ${BUNDLE_ID_HEADER}, ${BUNDLE_GENERATED_AT_HEADER}`,
  'Access-Control-Max-Age': '86400',
  'X-Content-Type-Options': 'nosniff',
};

export function cors(): Middleware {
  return async (ctx, next) => {
    const origin = allowedOrigin(ctx.get('Origin') || undefined);
    ctx.set(origin ? { ...CORS_FIELDS, 'Access-Control-Allow-Origin': origin } : CORS_FIELDS);
    if (origin) ctx.vary('Origin');
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    await next();
  };
}
