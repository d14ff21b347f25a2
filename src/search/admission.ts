/**
 * Admission control in front of Elasticsearch: at most `maxInFlight` Elasticsearch requests
 * of this process at once, up to `queue` more waiting for at most `queueMs` each, and
 * everything past that refused at once with 503 `overloaded` and `Retry-After`.
 *
 * Why: Elasticsearch on a few cores serves a handful of searches at a time; more in flight
 * only lengthen every answer (its own queue holds 1,000), until clients' timeouts turn the
 * pile into 504s for everyone. A refusal in microseconds keeps the admitted requests fast and
 * tells the others when to come back. The cap is per process: N gateways on one cluster admit
 * N × the cap.
 *
 * Fairness between clients (a client is the rate limit's identity, src/http/client-identity.ts,
 * carried here by `runAs`), as Crossref caps concurrent requests per client:
 * - one client has at most a quarter of the slots in flight (2 of 8) and half the queue; its
 *   further requests wait, or are refused. A burst — even one within the client's budget —
 *   then runs two at a time beside everyone else's requests instead of taking every slot
 *   (measured: a polite client's p99 beside a greedy one went from 3.4× its p99 alone to
 *   about 2×). A browser opens at most 6 connections to a host: 2 running + 4 waiting.
 * - a freed slot goes to the waiting client with the fewest requests in flight (the oldest
 *   request among equals), so a polite client's request is served before a greedy backlog.
 *
 * Deliberately not here: priorities between routes, and budgets over time (that is the rate
 * limit's job, src/http/middleware/rate-limit.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ApiError } from '../errors.ts';

/**
 * The request being served: its client, and whether one of its Elasticsearch requests was
 * already admitted — its further ones (a facet's labels, a second page of a history) then run
 * at once: a request admitted is not refused halfway, its first read wasted.
 */
interface RequestContext {
  client: string;
  admitted: boolean;
}

const current = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` (the rest of an HTTP request) as `client`: set by the HTTP layer around each request. */
export function runAs<T>(client: string, fn: () => T): T {
  return current.run({ client, admitted: false }, fn);
}

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
}

export interface AdmissionStats {
  inFlight: number;
  queued: number;
  /** Refused since start: queue full (or this client's half of it), or waited `queueMs`. */
  refused: number;
}

export interface Admission {
  /** Runs `call` once a slot is free; throws `overloaded` without calling it when none frees in time. */
  run<T>(call: () => Promise<T>): Promise<T>;
  /**
   * Whether a request of `client` would be refused right now (no free slot, and no place in
   * the queue for it): the HTTP layer then refuses before doing any work for the request. A
   * `true` is counted in `stats().refused`, as the refusal it leads to.
   */
  full(client: string): boolean;
  /**
   * No free slot and a full queue: whoever asks now is refused. Not counted (`full` counts the
   * refusal). The gateway then refuses before Koa (src/http/early-refusal.ts).
   */
  saturated(): boolean;
  stats(): AdmissionStats;
}

interface Waiter {
  client: string;
  start(): void;
  timer: NodeJS.Timeout;
}

interface Usage {
  inFlight: number;
  queued: number;
}

export function createAdmission(options: AdmissionOptions): Admission {
  const { maxInFlight, queue, queueMs, retryAfterSeconds = 1 } = options;
  const slotShare = Math.max(1, Math.ceil(maxInFlight / 4));
  const queueShare = Math.max(1, Math.ceil(queue / 2));
  let inFlight = 0;
  let refused = 0;
  const waiting: Waiter[] = [];
  /** Per client; clients with nothing in flight or queued are not kept. */
  const usage = new Map<string, Usage>();
  const usageOf = (client: string) => usage.get(client) ?? { inFlight: 0, queued: 0 };
  const change = (client: string, inFlightBy: number, queuedBy: number) => {
    const u = usageOf(client);
    const next = { inFlight: u.inFlight + inFlightBy, queued: u.queued + queuedBy };
    if (next.inFlight > 0 || next.queued > 0) usage.set(client, next);
    else usage.delete(client);
  };

  const refuse = () => {
    refused += 1;
    return ApiError.overloaded(retryAfterSeconds);
  };

  /** `call`, marking its request admitted when it starts. */
  const admitted =
    <T>(request: RequestContext, call: () => Promise<T>) =>
    () => {
      request.admitted = true;
      return call();
    };

  const mayStart = (client: string) => inFlight < maxInFlight && usageOf(client).inFlight < slotShare;

  /**
   * The waiter that may start whose client has the fewest requests in flight; the oldest among
   * equals (the queue is in arrival order).
   */
  function nextWaiter(): Waiter | undefined {
    let best = -1;
    for (let i = 0; i < waiting.length; i += 1) {
      const inFlightOf = usageOf(waiting[i]!.client).inFlight;
      if (inFlightOf >= slotShare) continue;
      if (best === -1 || inFlightOf < usageOf(waiting[best]!.client).inFlight) best = i;
    }
    return best === -1 ? undefined : waiting.splice(best, 1)[0];
  }

  async function runNow<T>(client: string, call: () => Promise<T>): Promise<T> {
    inFlight += 1;
    change(client, 1, 0);
    try {
      return await call();
    } finally {
      inFlight -= 1;
      change(client, -1, 0);
      for (let next = inFlight < maxInFlight ? nextWaiter() : undefined; next; next = inFlight < maxInFlight ? nextWaiter() : undefined) {
        clearTimeout(next.timer);
        change(next.client, 0, -1);
        next.start();
      }
    }
  }

  return {
    run(call) {
      const request = current.getStore();
      const client = request?.client ?? '';
      if (client === UNADMITTED) return call();
      if (request?.admitted) return runNow(client, call);
      if (request) call = admitted(request, call);
      if (mayStart(client)) return runNow(client, call);
      if (waiting.length >= queue || usageOf(client).queued >= queueShare) return Promise.reject(refuse());
      change(client, 0, 1);
      return new Promise((resolve, reject) => {
        const waiter: Waiter = {
          client,
          start: () => runNow(client, call).then(resolve, reject),
          timer: setTimeout(() => {
            waiting.splice(waiting.indexOf(waiter), 1);
            change(client, 0, -1);
            reject(refuse());
          }, queueMs),
        };
        waiting.push(waiter);
      });
    },
    full(client) {
      if (mayStart(client) || (waiting.length < queue && usageOf(client).queued < queueShare)) return false;
      refused += 1;
      return true;
    },
    saturated: () => inFlight >= maxInFlight && waiting.length >= queue,
    stats: () => ({ inFlight, queued: waiting.length, refused }),
  };
}
