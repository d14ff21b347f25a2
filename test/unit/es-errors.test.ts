/**
 * Elasticsearch failures as clients see them: capacity refusals (429, a rejected execution or a
 * tripped circuit breaker, however wrapped) are 503 `overloaded` with Retry-After, never a 500;
 * shard failures for want of a node or copy are 503 `unavailable`.
 */
import { errors } from '@elastic/elasticsearch';
import { describe, expect, it } from 'vitest';
import { describeEsError, toApiError } from '../../src/search/errors.ts';

const responseError = (statusCode: number, body: unknown) =>
  new errors.ResponseError({ body, statusCode, headers: {}, warnings: null, meta: {} as never });

describe('Elasticsearch errors', () => {
  it.each([
    ['a full search queue', 429, { error: { type: 'es_rejected_execution_exception', reason: 'rejected execution' }, status: 429 }],
    ['a circuit breaker', 429, { error: { type: 'circuit_breaking_exception', reason: '[parent] Data too large' }, status: 429 }],
    ['a rejection inside a failed search', 500, { error: { type: 'search_phase_execution_exception', caused_by: { type: 'es_rejected_execution_exception' } } }],
  ])('%s is 503 overloaded with Retry-After', (_name, status, body) => {
    const error = toApiError(responseError(status, body));
    expect(error).toMatchObject({ status: 503, code: 'overloaded' });
    expect(error.headers['Retry-After']).toBeDefined();
  });

  /** A search all of whose shards failed, as ES answers it, each for `cause`. */
  const allShardsFailed = (cause: string) => ({
    error: {
      root_cause: [{ type: cause, reason: `[rehearsal-1][127.0.0.11:9300][indices:data/read/search[phase/query]] ${cause}` }],
      type: 'search_phase_execution_exception',
      reason: 'all shards failed',
      phase: 'query',
      grouped: true,
      failed_shards: [{ shard: 0, index: 'registry-events-1', node: 'x1', reason: { type: cause, reason: 'disconnected' } }],
    },
    status: 500,
  });

  it.each(['node_disconnected_exception', 'node_not_connected_exception', 'no_shard_available_action_exception', 'task_cancelled_exception'])(
    'a search whose shards failed with %s (a node gone or cut off) is 503 unavailable with Retry-After',
    (cause) => {
      const error = toApiError(responseError(500, allShardsFailed(cause)));
      expect(error).toMatchObject({ status: 503, code: 'unavailable' });
      expect(error.headers['Retry-After']).toBeDefined();
    },
  );

  it('logs the causes under a failed search, not only its wrapper', () => {
    const described = describeEsError(responseError(500, allShardsFailed('node_disconnected_exception')));
    expect(described).toMatchObject({ type: 'search_phase_execution_exception', status: 500 });
    expect(described.causes).toEqual([expect.stringMatching(/^node_disconnected_exception: /), 'node_disconnected_exception: disconnected']);
  });

  it('a search whose shards failed on the query itself stays an internal error', () => {
    expect(toApiError(responseError(400, allShardsFailed('query_shard_exception'))).code).toBe('internal_error');
    expect(toApiError(responseError(500, allShardsFailed('illegal_argument_exception'))).code).toBe('internal_error');
  });

  it('keeps the other mappings', () => {
    expect(toApiError(responseError(503, {})).code).toBe('unavailable');
    expect(toApiError(responseError(404, {})).code).toBe('unavailable');
    expect(toApiError(responseError(504, {})).code).toBe('timeout');
    expect(toApiError(responseError(400, { error: { type: 'parsing_exception' } })).code).toBe('internal_error');
  });
});
