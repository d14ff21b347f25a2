/**
 * Starts the gateway: reads the config once, connects to Elasticsearch (ES_URL, or the one
 * `npm start` provided) and listens. `startServer` is also what tests and benchmarks use.
 */
import type { Server } from 'node:http';
import { pino } from 'pino';
import { type Config, loadConfig } from './config.ts';
import { createApp } from './http/app.ts';
import { createMeta } from './http/envelope.ts';
import { createMetrics } from './http/metrics.ts';
import { countGauges, createCountSource } from './routes/counts.ts';
import { createClient } from './search/client.ts';
import { describeEsError } from './search/errors.ts';
import { createSearchService } from './search/search-service.ts';

export interface RunningServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

export async function startServer(config: Readonly<Config>, esUrl: string): Promise<RunningServer> {
  const logger = pino({ level: config.logLevel });
  const client = createClient(esUrl, config.esRequestTimeoutMs, 0);
  let observeEs: (index: string, seconds: number, ok: boolean) => void = () => {};
  const search = createSearchService({
    client,
    prefix: config.indexPrefix,
    observe: (index, seconds, ok) => observeEs(index, seconds, ok),
    onError: (error, index) => logger.warn({ es: describeEsError(error), index }, 'elasticsearch request failed'),
  });
  const metrics = createMetrics(config.metricsPrefix, countGauges(config.defaultEnvironment), createCountSource(search, config));
  observeEs = metrics.observeEs;
  const app = createApp({ config, search, meta: createMeta(config.registryName), metrics, logger });
  const server = app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  return {
    server,
    url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await client.close();
    },
  };
}

if (import.meta.main) {
  const config = loadConfig();
  if (!config.esUrl) {
    console.error('ES_URL is not set: run `npm start` (it provides Elasticsearch) or set ES_URL.');
    process.exit(2);
  }
  const running = await startServer(config, config.esUrl);
  console.log(`registry gateway listening on ${running.url}/v1`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void running.close().then(() => process.exit(0)));
}
