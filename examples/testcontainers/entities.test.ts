import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RegistryGateway, startRegistryGateway } from './registry-gateway.ts';

let gateway: RegistryGateway;
beforeAll(async () => {
  gateway = await startRegistryGateway({ bundleDir: 'test/registry-bundle', gateway: { source: '../registry-query-gateway' } });
}, 600_000);
afterAll(() => gateway?.stop());

it('lists the entities of the bundle', async () => {
  const response = await fetch(`${gateway.url}/v1/entities?limit=1`);
  expect(response.status).toBe(200);
});
