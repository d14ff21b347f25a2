/**
 * The limits of src/limits applied to each request that reaches Koa: the client's identity
 * (src/limits/client-identity.ts), the request's cost (src/limits/request-cost.ts) and one
 * decision (src/limits/decide.ts: downloads, points, admission control) — unless the refusals
 * before Koa already decided it. A refusal is thrown for the error handler to render with the
 * RateLimit fields set here. An admitted request gets its ticket (`ctx.state.ticket`), which
 * each of its Elasticsearch requests carries (admission control shares the slots by client);
 * a probe's is `UNADMITTED`.
 */
import type { Middleware } from 'koa';
import { type Ticket, UNADMITTED, ticketOf } from '../../limits/admission.ts';
import { type IdentityRules, clientOf } from '../../limits/client-identity.ts';
import type { Limits } from '../../limits/decide.ts';
import { type CostClass, requestCost } from '../../limits/request-cost.ts';

export interface RateLimitOptions {
  limits: Limits;
  rules: IdentityRules;
  /** The cost class of the route a path matches (src/routes/operation.ts `routeCost`); undefined: no route. */
  costOf: (path: string) => CostClass | undefined;
}

/** What the rate limit leaves on an admitted request: whose Elasticsearch requests it makes. */
export interface TicketState {
  ticket: Ticket;
}

export function rateLimit({ limits, rules, costOf }: RateLimitOptions): Middleware<TicketState> {
  return async (ctx, next) => {
    const client = clientOf(ctx.req, rules);
    const decision = limits.remembered(ctx.req) ?? (await limits.decide(client, requestCost(costOf(ctx.path), ctx.query, client.loopback)));
    ctx.set(decision.fields);
    if (decision.verdict === 'refuse') throw decision.error;
    // `close` comes for every response, also one the client abandoned half way.
    if (decision.release) ctx.res.once('close', decision.release);
    ctx.state.ticket = decision.probe ? UNADMITTED : ticketOf(client.key);
    return next();
  };
}
