/**
 * Per-client budgets, before any work is done for the request (and the client's identity for
 * admission control, which shares Elasticsearch's slots by client: src/search/admission.ts):
 *
 * - **Points** (`RATE_LIMIT=<rate>/<burst>`, default 50/100): each request costs points by what
 *   it asks of Elasticsearch (../request-cost.ts); a client may spend `burst` points per window
 *   of `burst / rate` seconds — on average `rate` per second, at most `burst` at once. Past it:
 *   429 `rate_limited` with `Retry-After`, the seconds until the window renews.
 * - **Downloads** (`EXPORT_CONCURRENCY`, default 4): `/v1/exports/{file}` and lists asked as files (`format=`) cost no points (a
 *   file may take minutes); a client may have that many in flight, the next is a 429.
 *
 * Every answer carries the draft-11 fields (draft-ietf-httpapi-ratelimit-headers):
 * `RateLimit-Policy: "default";q=100;w=2, "downloads";q=4;qu="concurrent-requests"` and
 * `RateLimit: "default";r=<points left>;t=<seconds to renewal>` (`"downloads";r=<left>` on
 * exports).
 *
 * The points budget and where its counters live (this process, the workers' primary, or a
 * store shared by several gateways): ../points.ts. Downloads in flight are counted per process.
 */
import type { Middleware } from 'koa';
import type { RateLimit } from '../../config.ts';
import { ApiError } from '../../errors.ts';
import { type Admission, UNADMITTED, runAs } from '../../search/admission.ts';
import { type IdentityRules, clientIdentity } from '../client-identity.ts';
import type { Points, Refused } from '../points.ts';
import { type CostClass, refusedWhenSaturated, requestCost } from '../request-cost.ts';
import type { Holds } from '../holds.ts';

export interface RateLimitOptions {
  /** Points budget; undefined = `RATE_LIMIT=off`. */
  rateLimit: RateLimit | undefined;
  /** Downloads in flight per client; undefined = no limit. */
  exportConcurrency: number | undefined;
  rules: IdentityRules;
  /** Told of each refusal of points, so a refused client's next requests can be answered before Koa (../early-refusal.ts). */
  onRefused?: (client: string, refused: Refused) => void;
  /** The cost class of the route a path matches (src/routes/operation.ts `routeCost`); undefined: no route. */
  costOf: (path: string) => CostClass | undefined;
  /**
   * Admission control (src/search/admission.ts): a list, search or facet that it would refuse
   * is refused here, before routing, parsing and the live-generation lookup — under overload
   * most requests are refusals, and their cost is taken from the cores Elasticsearch needs.
   */
  admission?: Admission;
  /** The points budget (undefined: `RATE_LIMIT=off`), shared with the refusals before Koa. */
  points?: Points;
  /** Where a client's downloads in flight are counted (in this process; with workers, the primary's). */
  holds: Holds;
}

/** What a client holds while a download is in flight (../holds.ts). */
const DOWNLOADS = 'downloads';

/** The `RateLimit-Policy` value of a configuration (draft-11 structured list), or undefined when nothing is limited. */
export function policyField(rateLimit: RateLimit | undefined, exportConcurrency: number | undefined): string | undefined {
  const policies = [
    ...(rateLimit ? [`"default";q=${rateLimit.burst};w=${rateLimit.windowSeconds}`] : []),
    ...(exportConcurrency ? [`"downloads";q=${exportConcurrency};qu="concurrent-requests"`] : []),
  ];
  return policies.length ? policies.join(', ') : undefined;
}

export function rateLimit(options: RateLimitOptions): Middleware {
  const { rateLimit: budget, exportConcurrency, rules, admission, costOf, onRefused } = options;
  const policy = policyField(budget, exportConcurrency);
  const { points, holds } = options;

  return async (ctx, middleware) => {
    const client = clientIdentity(
      {
        peer: ctx.req.socket.remoteAddress,
        forwardedFor: ctx.get('X-Forwarded-For') || undefined,
        forwarded: ctx.get('Forwarded') || undefined,
        apiKey: ctx.get('X-Api-Key') || undefined,
      },
      rules,
    );
    const cost = requestCost(costOf(ctx.path), ctx.query, client.loopback);
    // The rest of the request runs as this client (admission control shares slots by client), or
    // unadmitted for a probe. A request that surely reads Elasticsearch is refused at once when
    // admission control would refuse it anyway (after its points are counted: refusals cost too).
    const next = () => {
      if (admission && refusedWhenSaturated(cost) && admission.full(client.key)) throw ApiError.overloaded();
      return runAs(cost.kind === 'points' && cost.probe ? UNADMITTED : client.key, middleware);
    };
    if (!policy) return next();
    ctx.set('RateLimit-Policy', policy);

    if (cost.kind === 'download') {
      if (!exportConcurrency) return next();
      const running = await holds.take(DOWNLOADS, client.key, exportConcurrency);
      if (running === undefined) {
        ctx.set('RateLimit', '"downloads";r=0');
        throw ApiError.rateLimited(`This client already has ${exportConcurrency} downloads in flight; retry when one has finished.`, 1);
      }
      ctx.set('RateLimit', `"downloads";r=${exportConcurrency - running - 1}`);
      // `close` comes for every response, also one the client abandoned half way.
      ctx.res.once('close', () => holds.give(DOWNLOADS, client.key));
      return next();
    }

    if (!points) return next();
    // A loopback probe costs 0: it reads the budget without spending or being refused.
    const spent = await points.spend(client.key, cost.points);
    ctx.set('RateLimit', spent.field);
    if (spent.refused) {
      onRefused?.(client.key, spent.refused.block);
      throw spent.refused.error;
    }
    return next();
  };
}
