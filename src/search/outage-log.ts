/**
 * Logging of Elasticsearch failures that does not flood: while the cluster is down every
 * request fails, and a warning per request buries everything else in the log. The first
 * failure of an outage (no connection, a timeout, 429/502/503/504) is logged with its reason;
 * the ones after it are counted and summarised at most once per `summaryMs` (on the next
 * failure after that time: no timer runs); the first success after them logs one line with
 * their count and how long the outage lasted. Any other failure (a request Elasticsearch
 * rejects, a missing index) says something about that request, not the cluster: it is logged
 * every time. Nothing here reaches clients.
 */
import { errors } from '@elastic/elasticsearch';
import type { Logger } from 'pino';
import { describeEsError } from './errors.ts';

export interface OutageLog {
  /** An ES request failed (the search service's `onError`). */
  failed(error: unknown, index: string): void;
  /** An ES request succeeded. */
  succeeded(): void;
}

export interface OutageLogOptions {
  /** Least time between two summaries of an ongoing outage. */
  summaryMs?: number;
  now?: () => number;
}

/** Whether a failure means the cluster cannot serve at all right now. */
export function isOutage(error: unknown): boolean {
  if (error instanceof errors.ConnectionError || error instanceof errors.NoLivingConnectionsError || error instanceof errors.TimeoutError) return true;
  return error instanceof errors.ResponseError && [429, 502, 503, 504].includes(error.statusCode ?? 0);
}

export function createOutageLog(logger: Logger, options: OutageLogOptions = {}): OutageLog {
  const { summaryMs = 30_000, now = Date.now } = options;
  let outage: { since: number; failures: number; unreported: number; reportedAt: number } | undefined;
  return {
    failed(error, index) {
      if (!isOutage(error)) {
        logger.warn({ es: describeEsError(error), index }, 'elasticsearch request failed');
        return;
      }
      const at = now();
      if (!outage) {
        outage = { since: at, failures: 1, unreported: 0, reportedAt: at };
        logger.warn({ es: describeEsError(error), index }, `elasticsearch request failed (further failures summarised every ${summaryMs / 1000} s)`);
        return;
      }
      outage.failures += 1;
      outage.unreported += 1;
      if (at - outage.reportedAt < summaryMs) return;
      logger.warn({ es: describeEsError(error), index, failures: outage.unreported, sinceMs: at - outage.since }, 'elasticsearch requests still failing');
      outage.unreported = 0;
      outage.reportedAt = at;
    },
    succeeded() {
      if (!outage) return;
      // At the failures' level, so that whoever sees the outage also sees its end.
      logger.warn({ failures: outage.failures, downMs: now() - outage.since }, 'elasticsearch answers again');
      outage = undefined;
    },
  };
}
