/**
 * The one error the object store client fails with: a single line naming the method, the URL
 * requested (never a credential: URLs carrying a user or password are refused when parsed,
 * and requests are signed in headers) and what went wrong, e.g.
 * `GET http://127.0.0.1:9000/bucket/registry/bundles/x/events.jsonl: 403 Forbidden (SignatureDoesNotMatch)`.
 *
 * The loader turns it into a LoadError, the gateway into its own answers (src/routes/exports.ts);
 * it knows neither.
 */
export class StoreError extends Error {
  override name = 'StoreError';
  /** The HTTP status the store answered, when it answered. */
  readonly status: number | undefined;
  /** The store's error code (`NoSuchKey`, `SignatureDoesNotMatch`), when its body named one. */
  readonly code: string | undefined;
  /** Retried until the attempts ran out (a fault that might pass), rather than refused at once. */
  readonly transient: boolean;

  constructor(message: string, options: { status?: number; code?: string; transient?: boolean } = {}) {
    super(message);
    this.status = options.status;
    this.code = options.code;
    this.transient = options.transient ?? false;
  }
}

/** `GET <url>: 403 Forbidden (SignatureDoesNotMatch)`. */
export function describeAnswer(method: string, url: string, status: number, statusText: string | undefined, code?: string): string {
  return `${method} ${url}: ${status}${statusText ? ` ${statusText}` : ''}${code ? ` (${code})` : ''}`;
}

/**
 * The caller's abort, as its signal states it (an `AbortError`, whatever the socket said when it
 * was cut), or undefined for any other error. An abort is never retried nor reworded.
 */
export function abortOf(error: unknown, signal?: AbortSignal): unknown {
  if (signal?.aborted) return signal.reason;
  return (error as Error | undefined)?.name === 'AbortError' ? error : undefined;
}
