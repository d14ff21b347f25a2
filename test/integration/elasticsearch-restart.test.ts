/**
 * Elasticsearch restarted the documented way (`npm run elasticsearch -- stop`, then `npm run
 * elasticsearch`) under a running gateway: the node comes back on the same port, the gateway
 * serves exports throughout and answers JSON again by itself, polled, without a restart. And
 * `npm start` says, when stopped, that the node it provided keeps running and how to stop it.
 *
 * This needs a node of its own (stopping the run's shared cluster would break every other test
 * file): the project's own provisioning (scripts/elasticsearch.ts) in a cache directory of its
 * own, sharing the one unpacked distribution. That takes a JDK, on every path the run takes
 * (CI's Testcontainers path runs the same distribution with the host's JDK).
 */
import { chmod, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeBundle } from '../../generator/write-bundle.ts';
import { spawnGatewayProcess } from '../../harness/gateway-process.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { createClient } from '../../src/search/client.ts';
import { type RunningServer, startServer } from '../../src/server.ts';
import { loadBundle } from '../../loader/load-bundle.ts';
import { ES_VERSION, installDistribution, provideElasticsearch, stopElasticsearch } from '../../scripts/elasticsearch.ts';

let work: string;
let nodeConfig: Readonly<Config>;
let esUrl: string;
let gateway: RunningServer;
let bundleDir: string;

beforeAll(async () => {
  const home = await installDistribution(loadConfig().cacheDir);
  work = await mkdtemp(path.join(tmpdir(), 'es-restart-'));
  // The node runs as an unprivileged user when we are root: it must reach its directory.
  await chmod(work, 0o755);
  await mkdir(path.join(work, 'elasticsearch'));
  await symlink(home, path.join(work, 'elasticsearch', `elasticsearch-${ES_VERSION}`));
  nodeConfig = loadConfig({ CACHE_DIR: work, ES_HEAP: '512m', INDEX_PREFIX: 'restart', DATA_DIR: path.join(work, 'data'), PORT: '0', LOG_LEVEL: 'silent' });
  const provided = await provideElasticsearch(nodeConfig);
  expect(provided.origin).toBe('started');
  esUrl = provided.url;

  bundleDir = path.join(work, 'bundle');
  await writeBundle(bundleDir, { scale: 1, seed: 71 });
  const client = createClient(esUrl, 120_000);
  await loadBundle(bundleDir, { client, prefix: nodeConfig.indexPrefix, dataDir: nodeConfig.dataDir, cycleStarts: nodeConfig.cycleStarts });
  await client.close();
  gateway = await startServer(nodeConfig, esUrl);
}, 300_000);

afterAll(async () => {
  await gateway?.close();
  if (nodeConfig) await stopElasticsearch(nodeConfig);
  if (work) await rm(work, { recursive: true, force: true });
}, 120_000);

const statusOf = async (route: string) => (await fetch(`${gateway.url}${route}`)).status;

/** Polls `route` until it answers `status`; the last status seen otherwise. */
async function pollUntil(route: string, status: number, attempts = 60): Promise<number> {
  let seen = 0;
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    seen = await statusOf(route);
    if (seen === status) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return seen;
}

it('comes back on the same port, and the running gateway answers again by itself', async () => {
  const before = (await (await fetch(`${gateway.url}/v1/entities?limit=10`)).json()) as { data: unknown[] };
  expect(before.data.length).toBeGreaterThan(0);

  await stopElasticsearch(nodeConfig);
  expect(await pollUntil('/v1/entities?limit=10', 503)).toBe(503);
  // The files are on local disk: served while the node is down.
  const manifest = await fetch(`${gateway.url}/v1/exports/manifest.json`);
  expect(manifest.status).toBe(200);
  expect(await manifest.text()).toBe(await readFile(path.join(bundleDir, 'manifest.json'), 'utf8'));
  expect(await statusOf('/v1/health')).toBe(200);

  const again = await provideElasticsearch(nodeConfig);
  expect(again).toEqual({ url: esUrl, origin: 'started' });
  // Polled as a client would: the first answers after the node is back may still be 503.
  expect(await pollUntil('/v1/entities?limit=10', 200)).toBe(200);
  expect(await (await fetch(`${gateway.url}/v1/entities?limit=10`)).json()).toEqual(before);
});

it('npm start, stopped, says the Elasticsearch it provided keeps running and how to stop it', async () => {
  const started = spawnGatewayProcess('scripts/start.ts', { CACHE_DIR: work, INDEX_PREFIX: nodeConfig.indexPrefix, DATA_DIR: nodeConfig.dataDir, LOG_LEVEL: 'warn' }, ['--no-load']);
  await started.listening;
  expect(started.stderr()).toContain(`reusing ${esUrl}`);

  started.child.kill('SIGINT');
  expect(await started.exited).toBe(0);
  expect(started.stderr().trim().split('\n').at(-1)).toBe(`Elasticsearch keeps running on ${esUrl}; stop it with \`npm run elasticsearch -- stop\`.`);
  // It does keep running.
  expect(await statusOf('/v1/entities?limit=1')).toBe(200);
});
