/**
 * Refusals before Koa, answered from the raw request handler with the same status,
 * `Retry-After`, RateLimit fields, CORS fields and error body the full stack sends, without the
 * middleware chain, routing, parameters or the per-request log line — under a flood most
 * requests are refusals, and every microsecond they take is taken from the cores Elasticsearch
 * and the polite clients need:
 *
 * - **429**: once the rate limit has refused a client (middleware/rate-limit.ts), its further
 *   requests until the window renews (a greedy client on a new connection per request would
 *   otherwise cost a full request each time).
 * - **503**: while admission control is saturated (no free slot, and nobody may wait:
 *   src/search/admission.ts), every list, search or facet — after its points are spent, as the
 *   full stack spends them (a client whose budget is spent gets the 429 instead).
 *
 * What still takes the full stack: requests with an `Origin` (CORS echoes it), probes and
 * downloads (not counted in points), paths no route serves (404), and anything the router
 * matches no cost for. Early refusals are counted on /metrics, not logged one by one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse } from 'node:querystring';
import { ApiError } from '../errors.ts';
import type { Admission } from '../search/admission.ts';
import { type IdentityRules, clientIdentity } from './client-identity.ts';
import { type Meta, toErrorBody } from './envelope.ts';
import { CORS_FIELDS } from './middleware/cors.ts';
import type { Points, Refused } from './points.ts';
import { type CostClass, refusedWhenSaturated, requestCost } from './request-cost.ts';

export interface EarlyRefusal {
  /** The rate limit refused `client` until `until` (epoch ms). */
  block(client: string, refused: Refused): void;
  /**
   * Answers `req` when it is refused: true (or a promise of true once the refusal's points are
   * spent); false when the full stack must answer it.
   */
  handle(req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean>;
  /** Requests answered here. */
  count(): number;
}

const COUNTED: ReadonlySet<CostClass> = new Set(['document', 'list', 'search']);

export interface EarlyRefusalOptions {
  rules: IdentityRules;
  meta: Meta;
  costOf: (path: string) => CostClass | undefined;
  /** Admission control: while it is saturated, lists, searches and facets are refused here. */
  admission?: Admission;
  /** The points budget (undefined: `RATE_LIMIT=off`), shared with the rate-limit middleware. */
  points?: Points;
  /** The `RateLimit-Policy` field every answer carries (undefined: nothing is limited). */
  policy?: string;
}

export function createEarlyRefusal(options: EarlyRefusalOptions): EarlyRefusal {
  const { rules, meta, costOf, admission, points, policy } = options;
  const blocked = new Map<string, Refused>();
  let answered = 0;

  /** Answers the refusal; `rateLimit`: its RateLimit fields. */
  const refuse = (req: IncomingMessage, res: ServerResponse, error: ApiError, rateLimit: Record<string, string>) => {
    const body = JSON.stringify(toErrorBody(error, meta));
    res.writeHead(error.status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      'Cache-Control': 'no-store',
      ...error.headers,
      ...rateLimit,
      ...CORS_FIELDS,
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    answered += 1;
    return true;
  };

  return {
    block(client, refused) {
      blocked.set(client, refused);
    },
    count: () => answered,
    handle(req, res) {
      const saturated = admission?.saturated() ?? false;
      if ((blocked.size === 0 && !saturated) || (req.method !== 'GET' && req.method !== 'HEAD') || req.headers.origin !== undefined) return false;
      const header = (name: string) => {
        const value = req.headers[name];
        return Array.isArray(value) ? value.join(', ') : value;
      };
      const client = clientIdentity({ peer: req.socket.remoteAddress, forwardedFor: header('x-forwarded-for'), forwarded: header('forwarded'), apiKey: header('x-api-key') }, rules);
      const now = Date.now();
      let refused = blocked.get(client.key);
      if (refused && refused.until <= now) {
        blocked.delete(client.key);
        refused = undefined;
      }
      if (!refused && !saturated) return false;
      const url = req.url ?? '/';
      const queryAt = url.indexOf('?');
      const costClass = costOf(queryAt === -1 ? url : url.slice(0, queryAt));
      if (costClass === undefined || !COUNTED.has(costClass)) return false;

      if (refused) {
        const wait = Math.max(1, Math.ceil((refused.until - now) / 1000));
        return refuse(req, res, ApiError.rateLimited(refused.message, wait), { 'RateLimit-Policy': refused.policy, RateLimit: `"default";r=0;t=${wait}` });
      }
      // Saturated. As the rate-limit middleware decides it: only what surely reads Elasticsearch
      // (downloads are limited apart).
      const cost = requestCost(costClass, queryAt === -1 ? {} : parse(url.slice(queryAt + 1)), client.loopback);
      if (!refusedWhenSaturated(cost)) return false;
      // Counted as admission control's refusal (it is one: nothing is admitted now), whichever the answer.
      admission!.full(client.key);
      const policyField: Record<string, string> = policy ? { 'RateLimit-Policy': policy } : {};
      // The full stack's 503 comes from past its compression, which names Accept-Encoding in
      // `Vary`; its 429 from the rate limit before it.
      const overloaded = (fields: Record<string, string>) => refuse(req, res, ApiError.overloaded(), { ...fields, ...policyField, Vary: 'Accept-Encoding' });
      if (!points) return overloaded({});
      return points.spend(client.key, cost.points).then((spent) => {
        if (!spent.refused) return overloaded({ RateLimit: spent.field });
        blocked.set(client.key, spent.refused.block);
        return refuse(req, res, spent.refused.error, { ...policyField, RateLimit: spent.field });
      });
    },
  };
}
