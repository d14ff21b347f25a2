/**
 * The typed client's types are exactly what openapi-typescript writes from the OpenAPI document
 * the gateway serves (`npm run client:types` rewrites them): no type of the client is written by
 * hand, and none drifts from the routes.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { CLIENT_TYPES_FILE, clientTypes } from '../../harness/client-types.ts';

it('packages/client/src/schema.ts is what /v1/openapi.json gives (npm run client:types)', async () => {
  expect(readFileSync(CLIENT_TYPES_FILE, 'utf8') === (await clientTypes()), 'run `npm run client:types`').toBe(true);
}, 60_000);
