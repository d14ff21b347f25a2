/**
 * `npm run cluster [-- --scale N] [--seconds S] [--rate R] [--heap H] [--kill master|other]`:
 * the gateway over a three-node cluster, one node killed mid-run.
 *
 * 1. Starts three nodes on loopback (scripts/elasticsearch-cluster.ts) and loads a bundle (the
 *    sample, or a generated one of `--scale N`) with one replica; waits for green.
 * 2. Starts the gateway as its own process with `ES_URL` listing all three nodes.
 * 3. Drives a steady mixed read load (`--rate` req/s) and polls `/v1/ready`: S seconds before,
 *    then SIGKILLs one node (the elected master by default) and keeps going through the
 *    failover (at least S seconds, until the survivors agree the node left) and S seconds after.
 * 4. Reloads the bundle (`force`, one replica) with the node still down, load still running,
 *    and checks the outcome is clean: the new generation live and only it and the previous one
 *    kept, or, if it failed, the old generation live and nothing of the new one left.
 * 5. Prints a JSON summary; exits 1 on any failed request or an unclean reload.
 *
 * Everything it starts it stops (nodes by their own pid files). Not a benchmark: the rate is
 * capped, the figures are latencies around a failover.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { Client } from '@elastic/elasticsearch';
import { readRows } from '../generator/read-bundle.ts';
import { ensureBundle } from '../generator/write-bundle.ts';
import { loadBundle } from '../loader/load-bundle.ts';
import { type Config, loadConfig, PROJECT_ROOT } from '../src/config.ts';
import { aliasName, META_INDEX, parseIndexName } from '../src/indices/generation.ts';
import { createClient } from '../src/search/client.ts';
import { type ClusterNode, type LocalCluster, startCluster } from './elasticsearch-cluster.ts';
import { ES_VERSION, freePort } from './elasticsearch.ts';
import { type ReadLoad, startReadLoad, summarize } from './read-load.ts';

/** Scale of the sample bundle `npm start` serves (scripts/start.ts), the default here too. */
const SAMPLE_SCALE = 3;

/**
 * A mix of the gateway's read routes over a bundle: entity list, search, detail and facts of
 * the bundle's first entities, killmails, events, sources and a current collection.
 */
export async function readPaths(bundleDir: string, entities = 20): Promise<string[]> {
  const rows = [];
  for await (const { row } of readRows(bundleDir, 'entities.jsonl')) {
    rows.push(row);
    if (rows.length === entities) break;
  }
  return rows.flatMap((row) => {
    const id = encodeURIComponent(String(row.id));
    const word = String(row.name).split(/\s+/)[0]!;
    return [
      '/v1/entities?limit=20',
      `/v1/search?q=${encodeURIComponent(word)}&limit=10`,
      `/v1/entities/${id}`,
      `/v1/entities/${id}/facts`,
      '/v1/killmails?limit=20',
      '/v1/events?limit=20',
      '/v1/sources?limit=20',
      '/v1/current/systems',
    ];
  });
}

/** The generation the aliases point at, and every generation that still has an index. */
export async function generationState(client: Client, prefix: string): Promise<{ live: string | undefined; kept: string[] }> {
  const aliases = await client.indices.getAlias({ name: aliasName(prefix, META_INDEX) }, { ignore: [404] });
  const live = Object.keys(aliases ?? {})
    .map((index) => parseIndexName(prefix, index)?.generation)
    .find(Boolean);
  const indices = await client.cat.indices({ index: `${prefix}-*`, format: 'json', h: 'index' });
  const kept = new Set(indices.map((row) => parseIndexName(prefix, row.index ?? '')?.generation).filter((g): g is string => Boolean(g)));
  return { live, kept: [...kept].sort() };
}

/**
 * Waits until the living nodes agree the killed node left (one node fewer, no shard
 * initialising or relocating) and a master is elected; returns that master.
 */
export async function waitForSurvivors(cluster: LocalCluster, timeoutMs = 120_000): Promise<ClusterNode> {
  const alive = cluster.nodes.filter((node) => node.alive);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = createClient(alive.map((node) => node.url).join(','), 10_000);
    try {
      const health = await client.cluster.health({ wait_for_nodes: String(alive.length), timeout: '2s' });
      if (!health.timed_out && health.initializing_shards === 0 && health.relocating_shards === 0) return await cluster.electedMaster();
    } catch {
      // No master yet: the survivors are still electing one.
    } finally {
      await client.close();
    }
    if (Date.now() > deadline) throw new Error('the surviving nodes did not settle in time');
    await sleep(250);
  }
}

/** Runs the gateway (`src/server.ts`) as its own process on a free port; resolves once it answers. */
async function startGateway(config: Readonly<Config>, esUrl: string, dataDir: string, logFile: string): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort();
  const out = openSync(logFile, 'w');
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'src', 'server.ts')], {
    stdio: ['ignore', out, out],
    // RATE_LIMIT and the connection cap off: the reads all come from 127.0.0.1 at up to --rate; this run is about failover, not budgets.
    env: { ...process.env, ES_URL: esUrl, HOST: '127.0.0.1', PORT: String(port), INDEX_PREFIX: config.indexPrefix, DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT: 'off', MAX_CONNECTIONS_PER_CLIENT: 'off' },
  });
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) break;
    if (await fetch(`${url}/v1/health`).then((r) => r.ok, () => false)) return { url, process: child };
    await sleep(200);
  }
  child.kill();
  throw new Error(`the gateway did not start; see ${logFile}`);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      scale: { type: 'string' },
      seconds: { type: 'string', default: '15' },
      rate: { type: 'string', default: '40' },
      heap: { type: 'string', default: '512m' },
      kill: { type: 'string', default: 'master' },
    },
  });
  const scale = Number(values.scale ?? SAMPLE_SCALE);
  const seconds = Number(values.seconds);
  const rate = Number(values.rate);
  if (![scale, seconds, rate].every((n) => Number.isInteger(n) && n > 0) || !['master', 'other'].includes(values.kill)) {
    console.error('usage: npm run cluster [-- --scale N] [--seconds S] [--rate R] [--heap 512m] [--kill master|other]');
    return 2;
  }
  const config = loadConfig();
  const log = (line: string) => console.error(line);
  const work = path.join(config.cacheDir, 'cluster');
  const dataDir = path.join(work, 'data');
  await rm(dataDir, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const bundleDir = await ensureBundle(path.join(config.cacheDir, `sample-bundle-scale-${scale}`), { scale }, log);

  const cluster = await startCluster({ cacheDir: config.cacheDir, name: 'cluster', heap: values.heap, log });
  let gateway: ChildProcess | undefined;
  const loads: ReadLoad[] = [];
  const client = createClient(cluster.esUrl, 120_000);
  try {
    const load = { client, prefix: config.indexPrefix, dataDir, cycleStarts: config.cycleStarts, currentCycle: config.currentCycle, replicas: 1 };
    const first = await loadBundle(bundleDir, load);
    await client.cluster.health({ wait_for_status: 'green', timeout: '120s' });
    log(`loaded ${first.rows} rows as generation ${first.generation} with 1 replica; cluster green`);

    const started = await startGateway(config, cluster.esUrl, dataDir, path.join(work, 'gateway.log'));
    gateway = started.process;
    const paths = await readPaths(bundleDir);
    const reads = startReadLoad(started.url, paths, { rate });
    const ready = startReadLoad(started.url, ['/v1/ready'], {
      rate: 4,
      workers: 1,
      note: (_, status, body) => (status === 200 ? JSON.parse(body).data.cluster : `http ${status}`),
    });
    loads.push(reads, ready);
    const t0 = performance.now();
    log(`gateway ${started.url} (ES_URL=${cluster.esUrl}); ${rate} req/s over ${paths.length} paths`);

    await sleep(seconds * 1000);
    const master = await cluster.electedMaster();
    const victim = values.kill === 'master' ? master : cluster.nodes.find((node) => node !== master)!;
    const tKill = performance.now();
    await cluster.kill(victim);
    log(`SIGKILLed ${victim.name}${victim === master ? ' (the elected master)' : ''}`);
    const newMaster = await waitForSurvivors(cluster);
    const settledMs = performance.now() - tKill;
    log(`survivors settled after ${Math.round(settledMs)} ms; master ${newMaster.name}`);
    const tSettled = Math.max(performance.now(), tKill + seconds * 1000);
    await sleep(tSettled - performance.now());
    await sleep(seconds * 1000);
    const tAfter = performance.now();

    log(`reloading ${bundleDir} (force, 1 replica) with ${victim.name} down`);
    const before = await generationState(client, config.indexPrefix);
    let reload: Record<string, unknown>;
    try {
      const summary = await loadBundle(bundleDir, { ...load, force: true });
      const state = await generationState(client, config.indexPrefix);
      const served = await waitForServedGeneration(started.url, summary.generation);
      const clean = state.live === summary.generation && state.kept.every((g) => g === summary.generation || g === before.live);
      reload = { outcome: 'loaded', seconds: Math.round(summary.seconds * 10) / 10, generation: summary.generation, previous: before.live, kept: state.kept, servedByGateway: served, clean: clean && served };
    } catch (error) {
      const state = await generationState(client, config.indexPrefix);
      const clean = state.live === before.live && state.kept.every((g) => before.kept.includes(g));
      reload = { outcome: 'failed', error: (error as Error).message, live: state.live, kept: state.kept, clean };
    }
    const tReloaded = performance.now();
    await sleep(1000);
    await Promise.all(loads.map((l) => l.stop()));

    const phase = (from: number, to: number) => {
      const { notes, ...figures } = summarize(reads.samples, from, to);
      return { ...figures, clusterSeenByReady: summarize(ready.samples, from, to).notes };
    };
    const phases = { before: phase(t0, tKill), during: phase(tKill, tSettled), after: phase(tSettled, tAfter), reload: phase(tAfter, tReloaded) };
    const all = summarize(reads.samples, t0, Infinity);
    const readyAll = summarize(ready.samples, t0, Infinity);
    const yellowWhileDown = summarize(ready.samples, tKill, tAfter).notes.yellow !== undefined;
    const ok = all.failures === 0 && reload.clean === true && yellowWhileDown;
    console.log(
      JSON.stringify(
        {
          ok,
          elasticsearch: { version: ES_VERSION, nodes: cluster.nodes.length, heapPerNode: values.heap, replicas: 1 },
          bundle: { dir: bundleDir, rows: first.rows },
          load: { ratePerSecond: rate, workers: 4, paths: paths.length },
          killed: { node: victim.name, electedMaster: victim === master, signal: 'SIGKILL', survivorsSettledMs: Math.round(settledMs), newMaster: newMaster.name },
          requests: all.requests,
          failures: all.failures,
          failedStatuses: all.failedStatuses,
          phases,
          ready: { polls: readyAll.requests, clusterSeen: readyAll.notes, yellowWhileDown },
          reload,
        },
        null,
        2,
      ),
    );
    return ok ? 0 : 1;
  } finally {
    await Promise.all(loads.map((l) => l.stop()));
    gateway?.kill('SIGTERM');
    await client.close();
    await cluster.stop({ keep: true });
  }
}

/** Polls `/v1/ready` until the gateway serves `generation` (it caches the live generation briefly). */
async function waitForServedGeneration(gatewayUrl: string, generation: string): Promise<boolean> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const body = (await fetch(`${gatewayUrl}/v1/ready`).then((r) => r.json(), () => undefined)) as { data?: { generation?: string } } | undefined;
    if (body?.data?.generation === generation) return true;
    await sleep(200);
  }
  return false;
}

if (import.meta.main) {
  // Nodes and gateway are children in this process group: Ctrl-C in a terminal stops them too,
  // and a run killed otherwise has its nodes stopped by the next run (startCluster).
  process.exitCode = await main();
}
