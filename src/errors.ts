/**
 * The one error class of the gateway, in no layer of its own: the pure query builders
 * (src/query), the ES boundary (src/search) and the routes throw `ApiError`s; src/http renders
 * them once. Only these codes reach clients (the reference's own): anything else thrown is
 * rendered as a bare 500 `internal_error`, its text only logged.
 */

export type ErrorCode =
  | 'bad_request'
  | 'not_found'
  | 'gone'
  | 'method_not_allowed'
  | 'rate_limited'
  | 'unavailable'
  | 'overloaded'
  | 'timeout'
  | 'internal_error';

export class ApiError extends Error {
  override name = 'ApiError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  /** Response headers that belong to the error (`Allow`, `Retry-After`). */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, status: number, details?: Record<string, unknown>, headers: Record<string, string> = {}) {
    // An ApiError is an answer, not a fault: its stack is never logged nor sent, and capturing
    // one would be a noticeable part of what a refusal costs under overload.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = stackTraceLimit;
    this.code = code;
    this.status = status;
    this.details = details;
    this.headers = headers;
  }

  /** A bad query parameter: the message and `details.parameter` name it. */
  static badParameter(parameter: string, message: string): ApiError {
    return new ApiError('bad_request', message, 400, { parameter });
  }

  static badRequest(message: string): ApiError {
    return new ApiError('bad_request', message, 400);
  }

  static notFound(message = 'Route not found.'): ApiError {
    return new ApiError('not_found', message, 404);
  }

  /** A record the registry held and removed (src/indices/changes.ts): `details.removedAt` says when. */
  static gone(what: string, removedAt: string): ApiError {
    return new ApiError('gone', `${what} was removed from the registry at ${removedAt}.`, 410, { removedAt });
  }

  /** A bundle never loaded here (`parameter`: where it was named). */
  static bundleNotFound(bundleId: string, parameter?: string): ApiError {
    return new ApiError('not_found', `No bundle ${bundleId}${parameter === undefined ? '' : ` (\`${parameter}\`)`} was loaded here (see /v1/bundles).`, 404, parameter === undefined ? undefined : { parameter });
  }

  /** A bundle loaded here and no longer kept: `oldestKept` names the oldest that is. */
  static bundleGone(bundleId: string, parameter: string, oldestKept: string | undefined): ApiError {
    const oldest = oldestKept === undefined ? '' : `; the oldest kept is ${oldestKept}`;
    return new ApiError('gone', `Bundle ${bundleId} is no longer kept here${oldest}.`, 410, { parameter, ...(oldestKept !== undefined && { oldestKept }) });
  }

  static methodNotAllowed(allow: string): ApiError {
    return new ApiError('method_not_allowed', 'Method not allowed.', 405, undefined, { Allow: allow });
  }

  static unavailable(message = 'The registry index is not available right now.', retryAfterSeconds = 5): ApiError {
    return new ApiError('unavailable', message, 503, undefined, { 'Retry-After': String(retryAfterSeconds) });
  }

  /** The client spent its budget (src/http/middleware/rate-limit.ts): come back after `Retry-After`. */
  static rateLimited(message: string, retryAfterSeconds: number): ApiError {
    return new ApiError('rate_limited', message, 429, undefined, { 'Retry-After': String(retryAfterSeconds) });
  }

  /**
   * Elasticsearch is at capacity (the admission queue is full, or Elasticsearch itself refused
   * the work): refused at once rather than queued into a timeout.
   */
  static overloaded(retryAfterSeconds = 1): ApiError {
    return new ApiError('overloaded', 'The registry index is at capacity right now; retry shortly.', 503, undefined, { 'Retry-After': String(retryAfterSeconds) });
  }

  /**
   * Elasticsearch did not answer in time: a slow cluster, or a node cut from the others (a
   * partition). Transient like a 503, so it says when to come back; never retried by the gateway.
   */
  static timeout(retryAfterSeconds = 5): ApiError {
    return new ApiError('timeout', 'The registry index did not answer in time.', 504, undefined, { 'Retry-After': String(retryAfterSeconds) });
  }

  static internal(): ApiError {
    return new ApiError('internal_error', 'Internal server error.', 500);
  }
}
