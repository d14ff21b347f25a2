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
 * Deliberately not here: priorities (every request is alike), and anything per client (that is
 * the rate limit's job, src/http/middleware/rate-limit.ts).
 */
import { ApiError } from '../errors.ts';

export interface AdmissionOptions {
  maxInFlight: number;
  /** Requests that may wait for a slot; 0 = none. */
  queue: number;
  /** Longest a request waits for a slot before it is refused. */
  queueMs: number;
  /** `Retry-After` of a refusal, in seconds. */
  retryAfterSeconds?: number;
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
  const { maxInFlight, queue, queueMs, retryAfterSeconds = 1 } = options;
  let inFlight = 0;
  let refused = 0;
  const waiting: Waiter[] = [];

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

  async function runNow<T>(call: () => Promise<T>): Promise<T> {
    inFlight += 1;
    try {
      return await call();
    } finally {
      release();
    }
  }

  return {
    run(call) {
      if (inFlight < maxInFlight) return runNow(call);
      if (waiting.length >= queue) return Promise.reject(refuse());
      return new Promise((resolve, reject) => {
        const waiter: Waiter = {
          start: () => runNow(call).then(resolve, reject),
          timer: setTimeout(() => {
            waiting.splice(waiting.indexOf(waiter), 1);
            reject(refuse());
          }, queueMs),
        };
        waiting.push(waiter);
      });
    },
    stats: () => ({ inFlight, queued: waiting.length, refused }),
  };
}
