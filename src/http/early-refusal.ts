/**
 * Refusals before Koa. Once the rate limit has refused a client (middleware/rate-limit.ts), its
 * further requests until the window renews are answered 429 from the raw request handler:
 * the same status, `Retry-After`, RateLimit fields, CORS fields and error body the full stack
 * sends, without the middleware chain, routing, parameters or the per-request log line — under
 * a flood most requests are refusals, and every microsecond they take is taken from the cores
 * Elasticsearch and the polite clients need (bench overload: a greedy client on a new
 * connection per request).
 *
 * What still takes the full stack: requests with an `Origin` (CORS echoes it), probes and
 * downloads (not counted in points), paths no route serves (404), and anything the router
 * matches no cost for. Early refusals are counted on /metrics, not logged one by one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../errors.ts';
import { type IdentityRules, clientIdentity } from './client-identity.ts';
import { type Meta, toErrorBody } from './envelope.ts';
import type { CostClass } from './request-cost.ts';

/** What a refusal says (as the rate limit words it), and until when the client is refused. */
export interface Refused {
  until: number;
  message: string;
  /** The RateLimit-Policy field. */
  policy: string;
}

export interface EarlyRefusal {
  /** The rate limit refused `client` until `until` (epoch ms). */
  block(client: string, refused: Refused): void;
  /** Answers `req` at once when its client is refused; false when the full stack must. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** Requests answered here. */
  count(): number;
}

const COUNTED: ReadonlySet<CostClass> = new Set(['document', 'list', 'search']);

export function createEarlyRefusal(options: { rules: IdentityRules; meta: Meta; costOf: (path: string) => CostClass | undefined }): EarlyRefusal {
  const { rules, meta, costOf } = options;
  const blocked = new Map<string, Refused>();
  let answered = 0;
  return {
    block(client, refused) {
      blocked.set(client, refused);
    },
    count: () => answered,
    handle(req, res) {
      if (blocked.size === 0 || (req.method !== 'GET' && req.method !== 'HEAD') || req.headers.origin !== undefined) return false;
      const header = (name: string) => {
        const value = req.headers[name];
        return Array.isArray(value) ? value.join(', ') : value;
      };
      const client = clientIdentity({ peer: req.socket.remoteAddress, forwardedFor: header('x-forwarded-for'), forwarded: header('forwarded'), apiKey: header('x-api-key') }, rules);
      const refused = blocked.get(client.key);
      if (!refused) return false;
      const now = Date.now();
      if (refused.until <= now) {
        blocked.delete(client.key);
        return false;
      }
      const url = req.url ?? '/';
      const query = url.indexOf('?');
      const cost = costOf(query === -1 ? url : url.slice(0, query));
      if (cost === undefined || !COUNTED.has(cost)) return false;
      const wait = Math.max(1, Math.ceil((refused.until - now) / 1000));
      const body = JSON.stringify(toErrorBody(ApiError.rateLimited(refused.message, wait), meta));
      res.writeHead(429, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
        'Cache-Control': 'no-store',
        'Retry-After': String(wait),
        'RateLimit-Policy': refused.policy,
        RateLimit: `"default";r=0;t=${wait}`,
        'Access-Control-Allow-Origin': '*',
        'Access-Control-Expose-Headers': 'ETag, Retry-After, RateLimit, RateLimit-Policy, Content-Encoding, Content-Length, Content-Range, Accept-Ranges, Last-Modified',
        'X-Content-Type-Options': 'nosniff',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
      answered += 1;
      return true;
    },
  };
}
