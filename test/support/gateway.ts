/**
 * A gateway over a freshly generated bundle, for integration tests: writes a deterministic
 * bundle into a temporary directory, loads it into the run's Elasticsearch under a prefix of
 * its own (test files run in parallel on one cluster), and starts the app on a free port.
 * Tests compute their expectations from `bundleDir`, never from Elasticsearch.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { writeBundle } from '../../generator/write-bundle.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { createClient } from '../../src/search/client.ts';
import { LIVE_CACHE_MS, WARM_MAX_MS } from '../../src/search/search-service.ts';
import { type ServerOptions, startServer } from '../../src/server.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { type LoadSummary, loadBundle } from '../../loader/load-bundle.ts';
import { deleteIndices, uniquePrefix } from './elasticsearch.ts';

export interface TestGateway {
  url: string;
  bundleDir: string;
  prefix: string;
  config: Readonly<Config>;
  load: LoadSummary;
  /**
   * Loads `source` as the next generation under this gateway's prefix (as `npm run load` would),
   * then waits until the gateway serves it (its one-second cache of the live generation, and the
   * warm-up of a new generation: src/search/search-service.ts WARM_REQUESTS): the next request reads it.
   */
  loadNext(source: string, options?: { store?: ObjectStore }): Promise<LoadSummary>;
  /** GET a path; JSON body parsed when the response is JSON. */
  get(pathAndQuery: string, init?: RequestInit): Promise<{ status: number; headers: Headers; body: any; text: string }>;
  close(): Promise<void>;
}

export interface TestGatewayOptions {
  name: string;
  scale?: number;
  seed?: number;
  /** Events per entity in the bundle (the generator's default unless set). */
  eventsPerEntity?: number;
  env?: Record<string, string>;
  /** Elasticsearch as the gateway reaches it (a proxy in front of the run's cluster); the load uses the cluster itself. */
  gatewayEsUrl?: string;
  /** Where the gateway's log lines go (silent unless `env` sets LOG_LEVEL). */
  logDestination?: ServerOptions['logDestination'];
  /** Publishes the written bundle somewhere (a store) and returns the source to load instead of the directory. */
  publish?: (bundleDir: string) => Promise<string>;
  /** Reads that source (an `s3://` one needs a key). */
  store?: ObjectStore;
}

export async function startTestGateway(options: TestGatewayOptions): Promise<TestGateway> {
  const esUrl = inject('esUrl');
  const work = await mkdtemp(path.join(tmpdir(), `gw-${options.name}-`));
  const bundleDir = path.join(work, 'bundle');
  await writeBundle(bundleDir, { scale: options.scale ?? 2, seed: options.seed ?? 1, eventsPerEntity: options.eventsPerEntity });
  const prefix = uniquePrefix(options.name);
  // Every test file's requests come from 127.0.0.1, at test speed (fetch opens a connection per
  // request in flight): the per-client budget and connection cap are off unless a test sets
  // RATE_LIMIT (test/integration/rate-limit.test.ts) or MAX_CONNECTIONS_PER_CLIENT (connection-cap.test.ts).
  const config = loadConfig({
    INDEX_PREFIX: prefix,
    DATA_DIR: path.join(work, 'data'),
    PORT: '0',
    LOG_LEVEL: 'silent',
    ES_URL: esUrl,
    RATE_LIMIT: 'off',
    MAX_CONNECTIONS_PER_CLIENT: 'off',
    ...options.env,
  });
  const client = createClient(esUrl, 120_000);
  const source = options.publish ? await options.publish(bundleDir) : bundleDir;
  const load = await loadBundle(source, { client, prefix, dataDir: config.dataDir, cycleStarts: config.cycleStarts, currentCycle: config.currentCycle, minShards: config.minShards, keep: config.keepGenerations, keepHours: config.keepHours, store: options.store });
  const running = await startServer(config, options.gatewayEsUrl ?? esUrl, { logDestination: options.logDestination });
  return {
    url: running.url,
    bundleDir,
    prefix,
    config,
    load,
    async loadNext(next, { store } = {}) {
      const summary = await loadBundle(next, { client, prefix, dataDir: config.dataDir, cycleStarts: config.cycleStarts, currentCycle: config.currentCycle, minShards: config.minShards, keep: config.keepGenerations, keepHours: config.keepHours, store });
      await new Promise((resolve) => setTimeout(resolve, LIVE_CACHE_MS + 100));
      for (let waited = 0; waited < LIVE_CACHE_MS + WARM_MAX_MS + 2000; waited += 50) {
        const ready = await fetch(`${running.url}/v1/ready`).then((r) => r.json()).catch(() => undefined);
        if ((ready as { data?: { generation?: string } } | undefined)?.data?.generation === summary.generation) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return summary;
    },
    async get(pathAndQuery, init) {
      const response = await fetch(`${running.url}${pathAndQuery}`, init);
      const text = await response.text();
      const json = /\bjson\b/.test(response.headers.get('content-type') ?? '') && text ? JSON.parse(text) : undefined;
      return { status: response.status, headers: response.headers, body: json, text };
    },
    async close() {
      await running.close();
      await deleteIndices(client, prefix);
      await client.close();
      await rm(work, { recursive: true, force: true });
    },
  };
}
