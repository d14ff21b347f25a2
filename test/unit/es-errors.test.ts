/**
 * Elasticsearch failures as clients see them: capacity refusals (429, a rejected execution or a
 * tripped circuit breaker, however wrapped) are 503 `overloaded` with Retry-After, never a 500.
 */
import { errors } from '@elastic/elasticsearch';
import { describe, expect, it } from 'vitest';
import { toApiError } from '../../src/search/errors.ts';

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

  it('keeps the other mappings', () => {
    expect(toApiError(responseError(503, {})).code).toBe('unavailable');
    expect(toApiError(responseError(404, {})).code).toBe('unavailable');
    expect(toApiError(responseError(504, {})).code).toBe('timeout');
    expect(toApiError(responseError(400, { error: { type: 'parsing_exception' } })).code).toBe('internal_error');
  });
});
