/**
 * The routes the API reference must list: every GET path of the gateway's router (the source
 * the OpenAPI document is written from), as templates (`/v1/entities/{idOrSlug}`). Built
 * without Elasticsearch: registering routes reads no index.
 */
import { templatePath } from '../../src/routes/operation.ts';
import { composed } from '../../harness/composed.ts';

export async function routeTemplates(): Promise<string[]> {
  const gateway = await composed({ RATE_LIMIT: 'off' });
  await gateway.release();
  return [...new Set(gateway.router.stack.filter((layer) => layer.methods.includes('GET')).map((layer) => templatePath(String(layer.path))))];
}
