/**
 * What the object store client retries, and how long it waits: pure rules, no I/O.
 *
 * Retried: a connection refused, reset or hung up, a DNS lookup that timed out, a request or a
 * body that went silent (our own stall timer), and the answers a store gives when it is busy or
 * briefly broken (408, 429, 5xx except 501/505). Not retried: any other 4xx (a wrong key, a
 * missing object, a bad request), a name that does not resolve, a TLS failure — retrying those
 * only delays the one clear line the operator needs.
 *
 * Waits grow exponentially with "equal jitter" (half fixed, half random), so clients that failed
 * together do not come back together; a `Retry-After` the store sent is honoured, up to a cap.
 */

/** Error codes of faults that may pass (Node's socket errors, undici's, our own stall timer's). */
const TRANSIENT_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

/** Whether an HTTP status is worth asking again. */
export function isTransientStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status <= 599 && status !== 501 && status !== 505);
}

/** Whether a thrown error (or any error in its `cause` chain) is a fault that may pass. */
export function isTransientError(error: unknown): boolean {
  for (let e = error as { code?: unknown; cause?: unknown; message?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth += 1) {
    if (typeof e.code === 'string' && TRANSIENT_CODES.has(e.code)) return true;
    // Node's http client: a server that closes the socket before answering.
    if (e.message === 'socket hang up' || e.message === 'aborted') return true;
  }
  return false;
}

/** `Retry-After` (seconds, or an HTTP date) → milliseconds from `nowMs`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

export interface Backoff {
  /** The first wait (before jitter); each further attempt doubles it. */
  baseMs: number;
  /** No wait is longer, `Retry-After` included. */
  maxMs: number;
}

/**
 * The wait before attempt `attempt + 1` (`attempt` counts the failures so far, from 1):
 * `d/2 + random·d/2` with `d = min(maxMs, baseMs·2^(attempt-1))`, or the store's `Retry-After`
 * when that is longer, capped at `maxMs`.
 */
export function retryDelayMs(attempt: number, backoff: Backoff, random: () => number = Math.random, retryAfterMs?: number): number {
  const ceiling = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.max(0, attempt - 1));
  const jittered = ceiling / 2 + random() * (ceiling / 2);
  return Math.round(Math.min(backoff.maxMs, Math.max(jittered, retryAfterMs ?? 0)));
}
