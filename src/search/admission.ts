/**
 * Admission control in front of Elasticsearch: at most `maxInFlight` Elasticsearch requests
 * of this process at once, up to `queue` more waiting (first come, first served) for at most
 * `queueMs` each, and everything past that refused at once with 503 `overloaded` and
 * `Retry-After`.
 *
 * Why: Elasticsearch on a few cores serves a handful of searches at a time; more in flight
 * only lengthen every answer (its own queue holds 1,000), until clients' timeouts turn the
 * pile into 504s for everyone. A refusal in microseconds keeps the admitted requests fast and
 * tells the others when to come back. The cap is per process: N gateways on one cluster admit
 * N × the cap.
 *
 * Fairness: while no slot is free, a client may hold at most half the slots (in flight and
 * queued together), so one client's burst cannot fill the queue in front of everyone else (a
 * client is the rate limit's identity, src/http/client-identity.ts, carried to here by
 * `admissionClient`). A free slot is taken by whoever comes: an idle gateway never refuses.
 *
 * Deliberately not here: priorities (every request is alike), and budgets over time (that is
 * the rate limit's job, src/http/middleware/rate-limit.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ApiError } from '../errors.ts';

/** The client on whose behalf the current request runs (set by the HTTP layer around each request). */
export const admissionClient = new AsyncLocalStorage<string>();

/**
 * Requests run as this "client" are not admitted but run at once: health, readiness and metrics
 * (a metrics scrape counts every index at once), so that monitoring and load balancers see the
 * gateway as it is under overload rather than their own refusals. Never a client identity
 * (those start with `ip:`, `ip6:` or `key:`).
 */
export const UNADMITTED = 'probe';

export interface AdmissionOptions {
  maxInFlight: number;
  /** Requests that may wait for a slot; 0 = none. */
  queue: number;
  /** Longest a request waits for a slot before it is refused. */
  queueMs: number;
  /** `Retry-After` of a refusal, in seconds. */
  retryAfterSeconds?: number;
  /** Places (in flight + queued) one client may hold while no slot is free; default half the slots, at least 1. */
  perClient?: number;
}

export interface AdmissionStats {
  inFlight: number;
  queued: number;
  /** Refused since start: queue full, or waited `queueMs`. */
  refused: number;
}

export interface Admission {
  /** Runs `call` once a slot is free; throws `overloaded` without calling it when none frees in time. */
  run<T>(call: () => Promise<T>): Promise<T>;
  stats(): AdmissionStats;
}

interface Waiter {
  start(): void;
  timer: NodeJS.Timeout;
}

export function createAdmission(options: AdmissionOptions): Admission {
  const { maxInFlight, queue, queueMs, retryAfterSeconds = 1, perClient = Math.max(1, Math.ceil(maxInFlight / 2)) } = options;
  let inFlight = 0;
  let refused = 0;
  const waiting: Waiter[] = [];
  /** Places each client holds (in flight + queued); clients holding none are not kept. */
  const held = new Map<string, number>();
  const hold = (client: string, n: number) => {
    const count = (held.get(client) ?? 0) + n;
    if (count > 0) held.set(client, count);
    else held.delete(client);
  };

  const refuse = () => {
    refused += 1;
    return ApiError.overloaded(retryAfterSeconds);
  };

  function release(): void {
    inFlight -= 1;
    const next = waiting.shift();
    if (next) {
      clearTimeout(next.timer);
      next.start();
    }
  }

  async function runNow<T>(client: string, call: () => Promise<T>): Promise<T> {
    inFlight += 1;
    try {
      return await call();
    } finally {
      hold(client, -1);
      release();
    }
  }

  return {
    run(call) {
      const client = admissionClient.getStore() ?? '';
      if (client === UNADMITTED) return call();
      if (inFlight < maxInFlight) {
        hold(client, 1);
        return runNow(client, call);
      }
      if (waiting.length >= queue || (held.get(client) ?? 0) >= perClient) return Promise.reject(refuse());
      hold(client, 1);
      return new Promise((resolve, reject) => {
        const waiter: Waiter = {
          start: () => runNow(client, call).then(resolve, reject),
          timer: setTimeout(() => {
            waiting.splice(waiting.indexOf(waiter), 1);
            hold(client, -1);
            reject(refuse());
          }, queueMs),
        };
        waiting.push(waiter);
      });
    },
    stats: () => ({ inFlight, queued: waiting.length, refused }),
  };
}
