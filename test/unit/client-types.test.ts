/**
 * The typed client's types are exactly what openapi-typescript writes from the OpenAPI document
 * the gateway serves (`npm run client:types` rewrites them): no type of the client is written by
 * hand, and none drifts from the routes; the header names it reads are the gateway's.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { CLIENT_TYPES_FILE, clientTypes } from '../../harness/client-types.ts';
import { BUNDLE_GENERATED_AT_HEADER as CLIENT_GENERATED_AT_HEADER, BUNDLE_ID_HEADER as CLIENT_ID_HEADER } from '../../packages/client/src/client.ts';
import { BUNDLE_GENERATED_AT_HEADER, BUNDLE_ID_HEADER } from '../../src/http/envelope.ts';

it('packages/client/src/schema.ts is what /v1/openapi.json gives (npm run client:types)', async () => {
  expect(readFileSync(CLIENT_TYPES_FILE, 'utf8') === (await clientTypes()), 'run `npm run client:types`').toBe(true);
}, 60_000);

it('names the bundle headers as the gateway writes them', () => {
  expect([CLIENT_ID_HEADER, CLIENT_GENERATED_AT_HEADER]).toEqual([BUNDLE_ID_HEADER, BUNDLE_GENERATED_AT_HEADER]);
});
