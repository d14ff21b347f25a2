/**
 * Gateway benchmark: loads a bundle, starts the gateway, and drives each route with
 * autocannon for a fixed time. The baseline is `/v1/health` (no Elasticsearch call) measured
 * in the same run; each route is reported as requests/s and as a ratio to that baseline, with
 * p50/p99 latency. Requests go to 127.0.0.1 only, bounded in time.
 */
import path from 'node:path';
import autocannon from 'autocannon';
import { ensureBundle } from '../generator/write-bundle.ts';
import { loadConfig } from '../src/config.ts';
import { createClient } from '../src/search/client.ts';
import { startServer } from '../src/server.ts';
import { loadBundle } from '../loader/load-bundle.ts';
import { provideElasticsearch } from '../scripts/elasticsearch.ts';

export interface RouteResult {
  route: string;
  requestsPerSecond: number;
  ratioToBaseline: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
}

const ROUTES = [
  '/v1/health',
  '/v1/entities?limit=50',
  '/v1/search?q=zeta&limit=20',
  '/v1/search?q=kor',
  '/v1/characters?cycles=all&limit=200',
  '/v1/current/systems',
  '/v1/killmails?npc=true',
  '/v1/killmails?limit=50',
  '/v1/events?limit=100',
  '/v1/sources',
  '/v1/ops/source-gaps',
  '/v1/exports/killmails.jsonl',
];

function run(url: string, seconds: number, connections: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ url, duration: seconds, connections }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

export async function benchHttp(scale: number, seconds: number, log: (line: string) => void): Promise<RouteResult[]> {
  const config = loadConfig({ ...process.env, INDEX_PREFIX: 'bench-http', PORT: '0', LOG_LEVEL: 'warn' });
  const dir = await ensureBundle(path.join(config.cacheDir, `bench-bundle-scale-${scale}`), { scale }, log);
  const { url } = await provideElasticsearch(config, log);
  const client = createClient(url, 300_000);
  await loadBundle(dir, { client, prefix: config.indexPrefix, dataDir: path.join(config.cacheDir, 'bench-data'), cycleStarts: config.cycleStarts });
  await client.close();
  const server = await startServer(config, url);
  try {
    const results: RouteResult[] = [];
    for (const route of ROUTES) {
      const result = await run(`${server.url}${route}`, seconds, 10);
      const baseline = results[0]?.requestsPerSecond ?? result.requests.average;
      results.push({
        route,
        requestsPerSecond: Math.round(result.requests.average),
        ratioToBaseline: Number((result.requests.average / baseline).toFixed(3)),
        p50Ms: result.latency.p50,
        p99Ms: result.latency.p99,
        non2xx: result.non2xx,
      });
      log(`${route}: ${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms`);
    }
    return results;
  } finally {
    await server.close();
  }
}
