/**
 * The project's Elasticsearch client (src/search/client.ts) on a real node: an error of a bulk
 * request holds its body as it was sent, not a copy. The client's default redaction copied the
 * error's whole diagnostic, a Buffer body byte by byte into an object's keys: a load that stopped
 * its bulk requests in flight grew by hundreds of megabytes (rehearsal seeds 6060 and 202).
 */
import type { errors } from '@elastic/elasticsearch';
import { expect, inject, it } from 'vitest';
import { createClient } from '../../src/search/client.ts';
import { uniquePrefix } from '../support/elasticsearch.ts';

/** A bulk body of `documents` index actions, about `bytes` long. */
function bulkBody(documents: number, bytes: number): Buffer {
  const pad = 'x'.repeat(Math.max(1, Math.floor(bytes / documents) - 40));
  return Buffer.from(Array.from({ length: documents }, (_, i) => `{"index":{"_id":"${i}"}}\n{"pad":"${pad}"}\n`).join(''));
}

it('an aborted bulk request fails with its body untouched and its headers left out', async () => {
  const client = createClient(inject('esUrl'));
  const body = bulkBody(200, 256 * 1024);
  const controller = new AbortController();
  const sent = client.bulk({ index: uniquePrefix('client-abort'), body } as never, { signal: controller.signal, headers: { authorization: 'Basic c2VjcmV0OnNlY3JldA==' } });
  controller.abort();
  const error = (await sent.then(
    () => undefined,
    (e: unknown) => e,
  )) as errors.RequestAbortedError;
  expect(error?.name).toBe('RequestAbortedError');
  const request = error.meta?.meta.request;
  // The very Buffer sent (a copy would be an object of one key per byte).
  expect(request?.params.body === body).toBe(true);
  expect(request?.params.headers).toBeUndefined();
  await client.close();
});
