/**
 * Elasticsearch failures → the gateway's own errors. Clients see `unavailable` (503, with
 * Retry-After) when the cluster cannot be reached or an index is missing, `overloaded` (503,
 * with Retry-After) when it refused the work for lack of capacity (429: a full search queue,
 * `es_rejected_execution_exception`, or a tripped circuit breaker, `circuit_breaking_exception`),
 * `timeout` (504) when it did not answer in time, and `internal_error` otherwise. The ES reason
 * is logged, never sent.
 */
import { errors } from '@elastic/elasticsearch';
import { ApiError } from '../errors.ts';

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof errors.TimeoutError) return ApiError.timeout();
  if (error instanceof errors.ConnectionError || error instanceof errors.NoLivingConnectionsError) return ApiError.unavailable();
  if (error instanceof errors.ResponseError) {
    const status = error.statusCode ?? 500;
    if (status === 429 || refusedForCapacity(error.body)) return ApiError.overloaded();
    if (status === 404 || status === 503) return ApiError.unavailable();
    if (status === 408 || status === 504) return ApiError.timeout();
  }
  return ApiError.internal();
}

const CAPACITY_REFUSALS = /"type":"(es_rejected_execution_exception|circuit_breaking_exception)"/;

/** Whether an ES error body names a capacity refusal anywhere (a search wraps shard failures in its own type). */
function refusedForCapacity(body: unknown): boolean {
  try {
    return CAPACITY_REFUSALS.test(typeof body === 'string' ? body : JSON.stringify(body));
  } catch {
    return false;
  }
}

/** What to log of an ES failure: its type and reason, without the request body. */
export function describeEsError(error: unknown): Record<string, unknown> {
  if (error instanceof errors.ResponseError) {
    const cause = (error.body as { error?: { type?: string; reason?: string } } | undefined)?.error;
    return { name: error.name, status: error.statusCode, type: cause?.type, reason: cause?.reason };
  }
  return { name: (error as Error)?.name, message: (error as Error)?.message };
}
