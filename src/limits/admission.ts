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
 * Fairness between clients (a client is the rate limit's identity, ./client-identity.ts, carried
 * to each Elasticsearch request by its request's `Ticket`: src/http/middleware/rate-limit.ts
 * issues it, the request's reader hands it to `run`), as Crossref caps concurrent requests per client:
 * - one client has at most a quarter of the slots in flight (2 of 8). Only its requests past
 *   that share wait, in half the queue at most, for its own slots. A burst — even one within the
 *   client's budget — then runs two at a time beside everyone else's requests instead of taking
 *   every slot, so a polite client beside it keeps its latency. A browser opens at most 6
 *   connections to a host: 2 running + 4 waiting.
 * - any other request that finds every slot taken is refused at once, before Koa
 *   (src/http/early-refusal.ts), rather than queued behind other clients' requests. Such a wait
 *   is added to everything admitted, and under a flood the queue's places go to requests that
 *   cross the whole stack only to be refused later.
 *
 * A queue that has not drained for `STANDING_MS` is standing, not a burst (a client keeps
 * bursting past its share): it then changes order (adaptive LIFO and controlled delay, as in
 * Maurer, "Fail at Scale", ACM Queue 2015). The newest waiter gets the next slot, and a newcomer
 * meeting a full queue takes the place of the oldest waiter once that one has waited
 * `standingWaitMs` (refused, as it would have been later): the ones refused are those that have
 * waited longest, not the newest.
 *
 * Deliberately not here: priorities between routes, and budgets over time (that is the rate
 * limit's job, ./decide.ts).
 */
import { ApiError } from '../errors.ts';

/**
 * Whose Elasticsearch requests these are: one per HTTP request (or stream), its client, and
 * whether one of its requests was already admitted — its further ones (a facet's labels, a
 * second page of a history) then run at once: a request admitted is not refused halfway, its
 * first read wasted.
 */
export interface Ticket {
  readonly client: string;
  admitted: boolean;
}

export const ticketOf = (client: string): Ticket => ({ client, admitted: false });

/**
 * The gateway's own work, never admitted but run at once: health, readiness and metrics (a
 * metrics scrape counts every index at once), so that monitoring and load balancers see the
 * gateway as it is under overload rather than their own refusals; and the stream hub's walks
 * after a swap. Its client is never a client identity (those start with `ip:`, `ip6:` or `key:`).
 */
export const UNADMITTED: Ticket = Object.freeze({ client: 'probe', admitted: false });

export interface AdmissionOptions {
  maxInFlight: number;
  /** Requests that may wait for a slot; 0 = none. */
  queue: number;
  /** Longest a request waits for a slot before it is refused. */
  queueMs: number;
  /** `Retry-After` of a refusal, in seconds. */
  retryAfterSeconds?: number;
  /** Whether the queue changes order while it stands (default true; false: always in arrival order). */
  adaptive?: boolean;
  /**
   * While the queue stands, how long a waiter keeps its place against a newcomer (default 25 ms).
   * The shorter, the shorter the admitted waits' tail; but at 0 every newcomer crosses the whole
   * stack to take a place, on the cores Elasticsearch needs. 25 ms keeps the tail short for
   * fewer of the gateway's cores than shorter waits.
   */
  standingWaitMs?: number;
  /** The clock, in ms (tests set it). */
  now?: () => number;
  /** Told how long each request admitted through the queue waited for its slot, in ms (metrics). */
  onWaited?: (ms: number) => void;
}

/** CoDel's interval: a queue that has not drained for this long is standing, not a burst. */
export const STANDING_MS = 100;

export interface AdmissionStats {
  inFlight: number;
  queued: number;
  /** Refused since start: queue full (or this client's half of it), or waited `queueMs`. */
  refused: number;
}

export interface Admission {
  /** Runs `call` for `ticket` once a slot is free; throws `overloaded` without calling it when none frees in time. */
  run<T>(call: () => Promise<T>, ticket: Ticket): Promise<T>;
  /**
   * Whether a request of `client` would be refused right now (no free slot for it, and no place
   * in the queue: the client is under its share, or its half of the queue is taken, or no place
   * is free or displaceable): the HTTP layer then refuses before doing any work for the request.
   * A `true` is counted in `stats().refused`, as the refusal it leads to.
   */
  full(client: string): boolean;
  /**
   * No free slot, and nobody may wait (no client has its share in flight, or the queue is full
   * with no waiter a newcomer may displace): whoever asks now is refused. Not counted (`full`
   * counts the refusal). The gateway then refuses before Koa (src/http/early-refusal.ts).
   */
  saturated(): boolean;
  stats(): AdmissionStats;
}

interface Waiter {
  client: string;
  /** When it was queued. */
  since: number;
  start(): void;
  /** Refuses it, freeing its place. */
  refuse(): void;
}

interface Usage {
  inFlight: number;
  queued: number;
}

export function createAdmission(options: AdmissionOptions): Admission {
  const { maxInFlight, queue, queueMs, retryAfterSeconds = 1, adaptive = true, standingWaitMs = 25, now = () => performance.now(), onWaited } = options;
  const slotShare = Math.max(1, Math.ceil(maxInFlight / 4));
  const queueShare = Math.max(1, Math.ceil(queue / 2));
  let inFlight = 0;
  let refused = 0;
  /** In arrival order. */
  const waiting: Waiter[] = [];
  /** Since when the queue has held someone without draining (reset only when it drains). */
  let nonEmptySince = 0;
  /** Per client; clients with nothing in flight or queued are not kept. */
  const usage = new Map<string, Usage>();
  const usageOf = (client: string) => usage.get(client) ?? { inFlight: 0, queued: 0 };
  /** Clients with their share of the slots in flight: the only ones whose requests may wait. */
  let atShare = 0;
  const change = (client: string, inFlightBy: number, queuedBy: number) => {
    const u = usageOf(client);
    const next = { inFlight: u.inFlight + inFlightBy, queued: u.queued + queuedBy };
    atShare += Number(next.inFlight >= slotShare) - Number(u.inFlight >= slotShare);
    if (next.inFlight > 0 || next.queued > 0) usage.set(client, next);
    else usage.delete(client);
  };

  const refuse = () => {
    refused += 1;
    return ApiError.overloaded(retryAfterSeconds);
  };

  /** `call`, marking its request admitted when it starts. */
  const admitted =
    <T>(ticket: Ticket, call: () => Promise<T>) =>
    () => {
      ticket.admitted = true;
      return call();
    };

  const mayStart = (client: string) => inFlight < maxInFlight && usageOf(client).inFlight < slotShare;
  const standing = (at: number) => adaptive && waiting.length > 0 && at - nonEmptySince >= STANDING_MS;
  /** The oldest waiter, when a newcomer may take its place: the queue stands and it has waited its turn. */
  const displaceable = () => {
    const at = now();
    return standing(at) && at - waiting[0]!.since >= standingWaitMs ? waiting[0] : undefined;
  };
  /**
   * Whether `client` finds a place in the queue: only behind its own requests (its share of the
   * slots in flight), in its half of the queue, at a free or displaceable place. A request of a
   * client under its share meets only other clients' requests in the slots: waiting for one to
   * finish would add the wait to what is admitted (the crowd's admitted p99 was 1.3–2.3× the
   * closed loop's at the same slots), and is refused at once instead, before Koa.
   */
  const placeFor = (client: string) => {
    const u = usageOf(client);
    return u.inFlight >= slotShare && u.queued < queueShare && (waiting.length < queue || displaceable() !== undefined);
  };

  /**
   * The waiter that may start (its client is under its share again): the oldest, or the newest
   * while the queue stands. Only a client's own finished request brings it under its share, so
   * the waiters that may start are that client's.
   */
  function nextWaiter(): Waiter | undefined {
    const newest = standing(now());
    let best = -1;
    for (let i = 0; i < waiting.length; i += 1) {
      if (usageOf(waiting[i]!.client).inFlight >= slotShare) continue;
      best = i;
      if (!newest) break;
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
      for (let next = inFlight < maxInFlight ? nextWaiter() : undefined; next; next = inFlight < maxInFlight ? nextWaiter() : undefined) next.start();
    }
  }

  function enqueue<T>(client: string, call: () => Promise<T>): Promise<T> {
    if (waiting.length === 0) nonEmptySince = now();
    else if (waiting.length >= queue) displaceable()?.refuse();
    change(client, 0, 1);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        client,
        since: now(),
        start: () => {
          onWaited?.(now() - waiter.since);
          clearTimeout(timer);
          change(client, 0, -1);
          runNow(client, call).then(resolve, reject);
        },
        refuse: () => {
          clearTimeout(timer);
          waiting.splice(waiting.indexOf(waiter), 1);
          change(client, 0, -1);
          reject(refuse());
        },
      };
      const timer = setTimeout(waiter.refuse, queueMs);
      waiting.push(waiter);
    });
  }

  return {
    run(call, ticket) {
      if (ticket === UNADMITTED) return call();
      const { client } = ticket;
      if (ticket.admitted) return runNow(client, call);
      call = admitted(ticket, call);
      if (mayStart(client)) return runNow(client, call);
      if (!placeFor(client)) return Promise.reject(refuse());
      return enqueue(client, call);
    },
    full(client) {
      if (mayStart(client) || placeFor(client)) return false;
      refused += 1;
      return true;
    },
    saturated: () => inFlight >= maxInFlight && (atShare === 0 || (waiting.length >= queue && displaceable() === undefined)),
    stats: () => ({ inFlight, queued: waiting.length, refused }),
  };
}
