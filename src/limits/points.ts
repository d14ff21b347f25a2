/**
 * The points budget (`RATE_LIMIT`): one per client, whichever worker or gateway serves it. Spent
 * by the one decision on each request (./decide.ts), made before Koa (src/http/early-refusal.ts)
 * or by the rate-limit middleware — each request once.
 *
 * Where the counters live (rate-limiter-flexible, fixed windows: the library has no token
 * bucket; a window of `burst` points renewed every `burst / rate` seconds gives a token bucket's
 * average rate and burst, and an exact renewal time for `t` and `Retry-After`):
 * - one process: in its memory (`RateLimiterMemory`);
 * - several workers: in the primary's memory, each spend one IPC round trip
 *   (`RateLimiterCluster`, its master in src/workers/primary.ts), so a client has one budget
 *   whichever worker its connections land on;
 * - `RATE_LIMIT_STORE=redis://…`: in Redis or Valkey, one budget across gateways on several
 *   machines (`RateLimiterRedis`, atomic per spend). The store is insured: while it cannot be
 *   reached, spends go to this gateway's own budget (memory or cluster, as above), so an outage
 *   never fails a request — clients are then limited per gateway until it is back.
 */
import type { Redis } from 'ioredis';
import { RateLimiterCluster, type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimit } from '../config.ts';
import { ApiError } from '../errors.ts';
import { pointsField, retryAfterSeconds } from './fields.ts';

/** What a refusal says (as the rate limit words it), and until when the client is refused. */
export interface Refused {
  until: number;
  message: string;
  /** The RateLimit-Policy field. */
  policy: string;
}

/**
 * A request's points spent: the `RateLimit` field its answer carries and, when the window was
 * already spent, the refusal and how long the client stays refused (./decide.ts refuses
 * its next requests until then).
 */
export interface Spent {
  field: string;
  refused?: { error: ApiError; block: Refused };
}

export interface Points {
  /** Spends `points` of `client`'s window (0: reports it without spending or refusing). */
  spend(client: string, points: number): Promise<Spent>;
}


/** Key prefixes of the counters: several gateways (index prefixes) may share one store. */
const KEY_PREFIX = 'points';

export interface LimiterPlace {
  /** This process is one of several workers: the budget lives in the primary. */
  worker: boolean;
  /** A Redis/Valkey connection shared by the gateways (`RATE_LIMIT_STORE`), with this process's budget as insurance. */
  store?: Redis;
  /** Keeps gateways with different index prefixes (different registries) apart in one store. */
  namespace: string;
}

/** The counters of a budget, where `place` says (see the header). */
export function createLimiter(budget: RateLimit, place: LimiterPlace): RateLimiterAbstract {
  const options = { points: budget.burst, duration: budget.windowSeconds, keyPrefix: `${KEY_PREFIX}:${place.namespace}` };
  // A worker's spend waits this long for the primary: it answers in microseconds unless gone.
  const local = place.worker ? new RateLimiterCluster({ ...options, timeoutMs: 1000 }) : new RateLimiterMemory(options);
  if (!place.store) return local;
  // Commands are never queued while the store is away: the insurance answers at once instead.
  return new RateLimiterRedis({ ...options, storeClient: place.store, rejectIfRedisNotReady: true, insuranceLimiter: local });
}

export function createPoints(budget: RateLimit, policy: string, limiter: RateLimiterAbstract): Points {
  return {
    async spend(client, points) {
      if (points === 0) {
        const state = await limiter.get(client);
        return { field: state ? pointsField(state.remainingPoints, state.msBeforeNext) : pointsField(budget.burst, budget.windowSeconds * 1000) };
      }
      try {
        const state = await limiter.consume(client, points);
        return { field: pointsField(state.remainingPoints, state.msBeforeNext) };
      } catch (refusal) {
        if (!(refusal instanceof RateLimiterRes)) throw refusal;
        const wait = retryAfterSeconds(refusal.msBeforeNext);
        return {
          field: pointsField(0, refusal.msBeforeNext),
          refused: {
            error: ApiError.rateLimited(
              `Too many requests from this client: the budget is ${budget.burst} points per ${budget.windowSeconds} s and this request costs ${points}; retry after ${wait} s.`,
              wait,
            ),
            block: {
              until: Date.now() + refusal.msBeforeNext,
              message: `Too many requests from this client: the budget is ${budget.burst} points per ${budget.windowSeconds} s; retry when the window renews.`,
              policy,
            },
          },
        };
      }
    },
  };
}
