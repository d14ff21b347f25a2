/**
 * The gateway over several Elasticsearch nodes (`ES_URL` as a list).
 *
 * - A list naming a node that does not answer beside the run's Elasticsearch: every read still
 *   answers 200 (the one retry goes to the living node), so the retry rule is checked on every
 *   test path (native or container).
 * - A real three-node cluster of native nodes (scripts/elasticsearch-cluster.ts, started and
 *   stopped here): under a steady read load the elected master is SIGKILLed; no read fails and
 *   every answer is the bundle's, `/v1/ready` reports the cluster yellow, and a forced reload
 *   with the node still down goes live cleanly. A smaller version of `npm run cluster`.
 *
 * Expected rows come from the bundle files. Nothing here is timed: the load's pace only keeps
 * requests flowing while the node dies.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readAllRows } from '../../generator/read-bundle.ts';
import { writeBundle } from '../../generator/write-bundle.ts';
import { type LoadSummary, loadBundle } from '../../loader/load-bundle.ts';
import { type LocalCluster, startCluster } from '../../scripts/elasticsearch-cluster.ts';
import { generationState, waitForSurvivors } from '../../scripts/cluster.ts';
import { freePort, nativeNodesMissing } from '../../scripts/elasticsearch.ts';
import { type Sample, startReadLoad } from '../../scripts/read-load.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { createClient } from '../../src/search/client.ts';
import { type RunningServer, startServer } from '../../src/server.ts';
import { uniquePrefix } from '../support/elasticsearch.ts';

/** A bundle written to a temporary directory, with what the tests expect of it. */
async function bundle(work: string): Promise<{ dir: string; ids: string[] }> {
  const dir = path.join(work, 'bundle');
  await writeBundle(dir, { scale: 1, seed: 11 });
  return { dir, ids: (await readAllRows(dir, 'entities.jsonl')).map((row) => String(row.id)) };
}

/** Entity details of the bundle's ids; a 200 counts only when it is that entity. */
function detailReads(ids: string[]): { paths: string[]; check: (path: string, body: string) => boolean } {
  const byPath = new Map(ids.slice(0, 20).map((id) => [`/v1/entities/${encodeURIComponent(id)}`, id]));
  return { paths: [...byPath.keys(), '/v1/entities?limit=5'], check: (p, body) => !byPath.has(p) || JSON.parse(body).data.id === byPath.get(p) };
}

async function startGateway(env: Record<string, string>): Promise<{ running: RunningServer; config: Readonly<Config> }> {
  const config = loadConfig({ PORT: '0', LOG_LEVEL: 'silent', ...env });
  return { running: await startServer(config, config.esUrl!), config };
}

describe('ES_URL listing a node that does not answer', () => {
  let work: string;
  let client: Client;
  let prefix: string;
  let gw: RunningServer;
  let ids: string[];

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'gw-nodes-'));
    const written = await bundle(work);
    ids = written.ids;
    prefix = uniquePrefix('nodes');
    client = createClient(inject('esUrl'), 120_000);
    await loadBundle(written.dir, { client, prefix, dataDir: path.join(work, 'data'), cycleStarts: loadConfig({}).cycleStarts });
    // The dead node first: the very first request meets it.
    ({ running: gw } = await startGateway({ ES_URL: `http://127.0.0.1:${await freePort()},${inject('esUrl')}`, INDEX_PREFIX: prefix, DATA_DIR: path.join(work, 'data') }));
  });
  afterAll(async () => {
    await gw?.close();
    const names = Object.keys((await client.indices.get({ index: `${prefix}-*` }, { ignore: [404] })) ?? {});
    if (names.length) await client.indices.delete({ index: names });
    await client.close();
    await rm(work, { recursive: true, force: true });
  });

  it('answers every read from the living node', async () => {
    const { paths, check } = detailReads(ids);
    for (const route of [...paths, '/v1/ready']) {
      const response = await fetch(`${gw.url}${route}`);
      const body = await response.text();
      expect(response.status, route).toBe(200);
      expect(check(route, body), route).toBe(true);
    }
  });
});

const config = loadConfig({});
const missing = await nativeNodesMissing(config.cacheDir);
if (missing) console.warn(`three-node cluster test skipped: ${missing}`);

describe.skipIf(missing !== undefined)(`three native nodes, one SIGKILLed${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let work: string;
  let cluster: LocalCluster;
  let client: Client;
  let gw: RunningServer;
  let ids: string[];
  let bundleDir: string;
  let first: LoadSummary;
  const prefix = 'registry';

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'gw-cluster-'));
    ({ dir: bundleDir, ids } = await bundle(work));
    // A small heap and the quick JIT: the test needs a cluster, not its speed.
    cluster = await startCluster({ cacheDir: config.cacheDir, name: `test-${process.pid}`, heap: '256m', jvmOptions: ['-XX:TieredStopAtLevel=1'] });
    client = createClient(cluster.esUrl, 120_000);
    first = await loadBundle(bundleDir, { client, prefix, dataDir: path.join(work, 'data'), cycleStarts: config.cycleStarts, replicas: 1 });
    await client.cluster.health({ wait_for_status: 'green', timeout: '60s' });
    ({ running: gw } = await startGateway({ ES_URL: cluster.esUrl, INDEX_PREFIX: prefix, DATA_DIR: path.join(work, 'data') }));
  });
  afterAll(async () => {
    await gw?.close();
    await client?.close();
    await cluster?.stop();
    await rm(work, { recursive: true, force: true });
  });

  it('serves every read through the failover, reports yellow, and reloads on the survivors', async () => {
    const { paths, check } = detailReads(ids);
    const reads = startReadLoad(gw.url, paths, { rate: 30, check });
    const ready = startReadLoad(gw.url, ['/v1/ready'], { rate: 5, workers: 1, note: (_, status, body) => (status === 200 ? JSON.parse(body).data.cluster : `http ${status}`) });
    try {
      await sleep(2_000);
      const master = await cluster.electedMaster();
      const killedAt = performance.now();
      await cluster.kill(master);
      const newMaster = await waitForSurvivors(cluster);
      expect(newMaster).not.toBe(master);
      // Reads keep flowing until /v1/ready has reported the degraded cluster.
      for (let i = 0; i < 50 && !ready.samples.some((s) => s.at > killedAt && s.note === 'yellow'); i++) await sleep(200);

      const reload = await loadBundle(bundleDir, { client, prefix, dataDir: path.join(work, 'data'), cycleStarts: config.cycleStarts, replicas: 1, force: true });
      expect(reload.status).toBe('loaded');
      expect(await generationState(client, prefix)).toEqual({ live: reload.generation, kept: [first.generation, reload.generation].sort() });
      await reads.stop();
      await ready.stop();

      const failed = (samples: readonly Sample[]) => samples.filter((s) => !s.ok).map((s) => `${s.path} → ${s.status}`);
      expect(reads.samples.filter((s) => s.at > killedAt).length).toBeGreaterThan(0);
      expect(failed(reads.samples)).toEqual([]);
      expect(failed(ready.samples)).toEqual([]);
      expect(ready.samples.filter((s) => s.at > killedAt).map((s) => s.note)).toContain('yellow');

      const answer = (await fetch(`${gw.url}/v1/entities/${encodeURIComponent(ids[0]!)}`).then((r) => r.json())) as { data: { id: string } };
      expect(answer.data.id).toBe(ids[0]);
    } finally {
      await reads.stop();
      await ready.stop();
    }
  });
});
