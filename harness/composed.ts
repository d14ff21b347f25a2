/**
 * A gateway composed as production composes it (src/compose.ts), for tests and scripts that need
 * its app or router without a server process: by default on an Elasticsearch URL where nothing
 * listens (port 9), for what never reads an index (registering routes, the OpenAPI document).
 */
import { loadConfig } from '../src/config.ts';
import { type Gateway, composeGateway } from '../src/compose.ts';

export function composed(env: Record<string, string> = {}, esUrl = 'http://127.0.0.1:9'): Promise<Gateway> {
  return composeGateway(loadConfig({ LOG_LEVEL: 'silent', ...env }), esUrl);
}
