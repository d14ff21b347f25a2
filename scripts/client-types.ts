/**
 * `npm run client:types`: writes the typed client's types (packages/client/src/schema.ts) from
 * the OpenAPI document the gateway serves at /v1/openapi.json, with openapi-typescript — the
 * one source of every type the client has. test/unit/client-types.test.ts fails while they differ.
 */
import { writeFileSync } from 'node:fs';
import { clientTypes, CLIENT_TYPES_FILE } from '../harness/client-types.ts';

writeFileSync(CLIENT_TYPES_FILE, await clientTypes());
console.log(`${CLIENT_TYPES_FILE}: written from /v1/openapi.json`);
process.exit(0);
