/**
 * Refusals before Koa, answered from the raw request handler with the same status,
 * `Retry-After`, RateLimit fields, CORS fields and error body the full stack sends, without the
 * middleware chain, routing, parameters or the per-request log line — under a flood most
 * requests are refusals, and every microsecond they take is taken from the cores Elasticsearch
 * and the polite clients need:
 *
 * - **429**: once the budget has refused a client, its further requests until the window renews
 *   (a greedy client on a new connection per request would otherwise cost a full request each
 *   time).
 * - **503**: while admission control is saturated (no free slot, and nobody may wait:
 *   src/limits/admission.ts), every list, search or facet — after its points are spent (a client
 *   whose budget is spent gets the 429 instead).
 *
 * The decision is src/limits/decide.ts's, as for every request: this file only answers it.
 *
 * What still takes the full stack: requests with an `Origin` (CORS echoes it), probes and
 * downloads (not counted in points), paths no route serves (404), and anything the router
 * matches no cost for. Early refusals are counted on /metrics, not logged one by one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse } from 'node:querystring';
import type { ApiError } from '../errors.ts';
import { type IdentityRules, clientOf } from '../limits/client-identity.ts';
import type { Limits } from '../limits/decide.ts';
import { type CostClass, requestCost } from '../limits/request-cost.ts';
import { type Meta, toErrorBody } from './envelope.ts';
import { CORS_FIELDS } from './middleware/cors.ts';

export interface EarlyRefusal {
  /**
   * Answers `req` when it is refused: true (or a promise of true once the refusal's points are
   * spent); false when the full stack must answer it.
   */
  handle(req: IncomingMessage, res: ServerResponse): false | Promise<boolean>;
  /** Requests answered here. */
  count(): number;
}

const COUNTED: ReadonlySet<CostClass> = new Set(['document', 'list', 'search']);

export interface EarlyRefusalOptions {
  limits: Limits;
  rules: IdentityRules;
  meta: Meta;
  costOf: (path: string) => CostClass | undefined;
}

export function createEarlyRefusal({ limits, rules, meta, costOf }: EarlyRefusalOptions): EarlyRefusal {
  let answered = 0;

  /** Answers the refusal with its RateLimit fields. */
  const refuse = (req: IncomingMessage, res: ServerResponse, error: ApiError, fields: Record<string, string>) => {
    const body = JSON.stringify(toErrorBody(error, meta));
    res.writeHead(error.status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      'Cache-Control': 'no-store',
      ...error.headers,
      ...fields,
      ...CORS_FIELDS,
      // The full stack's 503 comes from past its compression, which names Accept-Encoding in
      // `Vary`; its 429 from the rate limit before it.
      ...(error.status === 503 && { Vary: 'Accept-Encoding' }),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    answered += 1;
    return true;
  };

  return {
    count: () => answered,
    handle(req, res) {
      if (!limits.anyRefusedNow() || (req.method !== 'GET' && req.method !== 'HEAD') || req.headers.origin !== undefined) return false;
      const client = clientOf(req, rules);
      const url = req.url ?? '/';
      const queryAt = url.indexOf('?');
      const costClass = costOf(queryAt === -1 ? url : url.slice(0, queryAt));
      if (costClass === undefined || !COUNTED.has(costClass)) return false;
      const cost = requestCost(costClass, queryAt === -1 ? {} : parse(url.slice(queryAt + 1)), client.loopback);
      if (!limits.refusedNow(client, cost)) return false;
      return limits.decide(client, cost).then((decision) => {
        if (decision.verdict === 'refuse') return refuse(req, res, decision.error, decision.fields);
        // Admitted after all (a slot freed meanwhile): the full stack serves it on this decision.
        limits.remember(req, decision);
        return false;
      });
    },
  };
}
