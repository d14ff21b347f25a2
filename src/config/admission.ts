/**
 * The gateway's requests to Elasticsearch (src/search, src/limits/admission.ts): how long one may
 * take, how many are in flight at once, the queue behind them, and the response cache that
 * spares them.
 */
import { int, oneOf, orOff, scaled } from './parse.ts';
import { section } from './setting.ts';
import type { QueueOrder } from './types.ts';

const QUEUE_ORDERS: readonly QueueOrder[] = ['adaptive', 'fifo'];

/**
 * Admission control defaults: about the fewest concurrent searches and facets that keep a small
 * Elasticsearch node busy (more add latency, little throughput: the knee of the overload
 * benchmark's capacity sweep), and a queue as long, so a burst waits briefly instead of being
 * refused.
 */
export const DEFAULT_ES_MAX_IN_FLIGHT = 8;
export const DEFAULT_ES_QUEUE = 8;
/** Response cache size, MB (see README, Operations: sizing the cache). */
export const DEFAULT_RESPONSE_CACHE_MB = 64;

export const admission = section({
  esRequestTimeoutMs: {
    env: 'ES_REQUEST_TIMEOUT_MS',
    default: 10_000,
    parse: int(100, 600_000),
    meaning:
      'per-request timeout; past it a request answers 504 `timeout` with `Retry-After`, never retried. A node that cannot be reached: with one node the gateway answers 503 + `Retry-After` at once; with a list it retries the read exactly once on another living node (see *Several Elasticsearch nodes*). The loader retries with backoff',
    readBy: ['gateway'],
  },
  esMaxInFlight: {
    env: 'ES_MAX_IN_FLIGHT',
    default: DEFAULT_ES_MAX_IN_FLIGHT,
    parse: orOff(int(1, 10_000)),
    meaning:
      'admission control: Elasticsearch requests in flight from this gateway (all its workers together: each admits its share, at least 1); `off` = no cap',
    readBy: ['gateway'],
  },
  esQueue: {
    env: 'ES_QUEUE',
    default: DEFAULT_ES_QUEUE,
    parse: int(0, 100_000),
    meaning:
      "requests that may wait for a slot (the gateway's total, shared out like the slots) (only a client's requests past its share of the slots, behind its own), and how long; past either, 503 `overloaded` + `Retry-After: 1` at once",
    readBy: ['gateway'],
  },
  esQueueMs: { env: 'ES_QUEUE_MS', default: 1000, parse: int(1, 600_000), row: 'ES_QUEUE', readBy: ['gateway'] },
  esQueueOrder: {
    env: 'ES_QUEUE_ORDER',
    default: 'adaptive',
    parse: oneOf(QUEUE_ORDERS),
    meaning: '`adaptive`: first in, first out, but newest first once the queue has stood 100 ms (see *Operations*); `fifo`: always in arrival order',
    readBy: ['gateway'],
  },
  responseCacheBytes: {
    env: 'RESPONSE_CACHE',
    default: DEFAULT_RESPONSE_CACHE_MB,
    parse: orOff(scaled(int(1, 1_000_000), 1024 * 1024)),
    meaning:
      'MB of answers kept in memory per gateway process — per worker: the bound is `WORKERS` × this (encoded, keyed by the live generation, the route, the validated query and the encoding; cleared by a swap); `off` turns it off. With it on, identical requests in flight also share one Elasticsearch request. See *Operations*',
    readBy: ['gateway'],
  },
});
