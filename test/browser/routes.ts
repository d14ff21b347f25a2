/**
 * The routes the API reference must list: every GET path of the gateway's router (the source
 * the OpenAPI document is written from), as templates (`/v1/entities/{idOrSlug}`). Built
 * without Elasticsearch: registering routes reads no index.
 */
import { pino } from 'pino';
import { loadConfig } from '../../src/config.ts';
import { createRouter } from '../../src/app.ts';
import { createMeta } from '../../src/http/envelope.ts';
import { createMetrics } from '../../src/http/metrics.ts';
import { templatePath } from '../../src/routes/operation.ts';
import { createClient } from '../../src/search/client.ts';
import { createSearchService } from '../../src/search/search-service.ts';

export function routeTemplates(): string[] {
  const client = createClient('http://127.0.0.1:9', 1000);
  const router = createRouter({
    config: loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT: 'off' }),
    search: createSearchService({ client, prefix: 'routes' }),
    meta: createMeta('routes'),
    metrics: createMetrics('routes', [], async () => ({})),
    logger: pino({ level: 'silent' }),
  });
  void client.close();
  return [...new Set(router.stack.filter((layer) => layer.methods.includes('GET')).map((layer) => templatePath(String(layer.path))))];
}
