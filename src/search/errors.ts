/**
 * Elasticsearch failures → the gateway's own errors. Clients see `unavailable` (503, with
 * Retry-After) when the cluster cannot be reached or an index is missing, `overloaded` (503,
 * with Retry-After) when it refused the work for lack of capacity (429: a full search queue,
 * `es_rejected_execution_exception`, or a tripped circuit breaker, `circuit_breaking_exception`),
 * `timeout` (504) when it did not answer in time, and `internal_error` otherwise. A search whose
 * shards failed for want of a node or a shard copy (a node dying or cut off, a copy moving: see
 * UNREACHABLE_COPIES) answers with its shard failures' status, often 500; it is `unavailable` too,
 * for another try soon finds the copies again. The ES reason is logged, never sent.
 */
import { errors } from '@elastic/elasticsearch';
import { ApiError } from '../errors.ts';

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof errors.TimeoutError) return ApiError.timeout();
  if (error instanceof errors.ConnectionError || error instanceof errors.NoLivingConnectionsError) return ApiError.unavailable();
  if (error instanceof errors.ResponseError) {
    const status = error.statusCode ?? 500;
    if (status === 429 || namesAny(error.body, CAPACITY_REFUSALS)) return ApiError.overloaded();
    if (status === 404 || status === 503 || namesAny(error.body, UNREACHABLE_COPIES)) return ApiError.unavailable();
    if (status === 408 || status === 504) return ApiError.timeout();
  }
  return ApiError.internal();
}

const CAPACITY_REFUSALS = /"type":"(es_rejected_execution_exception|circuit_breaking_exception)"/;

/**
 * Failures of a node or shard copy, not of the request: the node left or cannot be reached
 * (transport exceptions), the copy is not there or not started yet, or the search's task went
 * with the node that ran it.
 */
const UNREACHABLE_COPIES =
  /"type":"(node_disconnected_exception|node_not_connected_exception|node_closed_exception|connect_transport_exception|send_request_transport_exception|no_shard_available_action_exception|shard_not_found_exception|illegal_index_shard_state_exception|index_shard_closed_exception|unavailable_shards_exception|no_node_available_exception|master_not_discovered_exception|task_cancelled_exception)"/;

/** Whether an ES error body names one of `types` anywhere (a search wraps shard failures in its own type). */
function namesAny(body: unknown, types: RegExp): boolean {
  try {
    return types.test(typeof body === 'string' ? body : JSON.stringify(body));
  } catch {
    return false;
  }
}

interface EsCause {
  type?: string;
  reason?: string;
  caused_by?: EsCause;
  root_cause?: EsCause[];
  failed_shards?: { reason?: EsCause }[];
}

/** What to log of an ES failure: its type and reason, and the distinct causes under it (a failed search's shard failures), without the request body. */
export function describeEsError(error: unknown): Record<string, unknown> {
  if (error instanceof errors.ResponseError) {
    const cause = (error.body as { error?: EsCause } | undefined)?.error;
    const under = new Set<string>();
    const visit = (c: EsCause | undefined, depth: number): void => {
      if (!c || depth > 4) return;
      if (depth > 0 && c.type) under.add(`${c.type}: ${String(c.reason).slice(0, 120)}`);
      visit(c.caused_by, depth + 1);
      for (const r of c.root_cause ?? []) visit(r, depth + 1);
      for (const f of c.failed_shards ?? []) visit(f.reason, depth + 1);
    };
    visit(cause, 0);
    return { name: error.name, status: error.statusCode, type: cause?.type, reason: cause?.reason, ...(under.size > 0 && { causes: [...under] }) };
  }
  return { name: (error as Error)?.name, message: (error as Error)?.message };
}
