/**
 * The Testcontainers module (packages/testcontainers) run as a client runs it, so it cannot rot:
 * Elasticsearch and the gateway in containers on a network of their own, the gateway's image
 * built from this repository's Dockerfile, a generated bundle loaded once; a sample bundle the
 * gateway writes itself; a broken bundle that fails the start with the loader's words and leaves
 * nothing running. Where images can be pulled that is the module's defaults (the official
 * Elasticsearch, the Dockerfile's node:24-slim); where they cannot (this project's machines),
 * images built FROM the local Debian base (test/support/local-images.ts).
 *
 * It needs a container engine (CI brings one up) and is skipped, saying so, without one. It does
 * not use the run's Elasticsearch: the module brings its own. Expected values come from the
 * bundle files.
 */
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { getContainerRuntimeClient } from 'testcontainers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_IMAGE, RegistryGatewayContainer, type StartedRegistryGatewayContainer } from '../../packages/testcontainers/src/index.ts';
import { readAllRows, readManifest } from '../../generator/read-bundle.ts';
import { writeBundle } from '../../generator/write-bundle.ts';
import { loadConfig, PROJECT_ROOT } from '../../src/config.ts';
import { containerEngineReachable, localBasePresent } from '../support/elasticsearch-container.ts';
import { buildNodeBaseImage, localElasticsearch } from '../support/local-images.ts';

const engine = await containerEngineReachable();
const skipped = engine ? '' : ' (skipped: no container engine reachable; DOCKER_HOST or the default socket, e.g. ../shared/tools/container-engine.sh up)';

/** The module's gateway: built from this checkout, on the local base where nothing can be pulled; Elasticsearch likewise. */
async function gatewayContainer(build: boolean): Promise<RegistryGatewayContainer> {
  const local = await localBasePresent();
  const container = build ? await RegistryGatewayContainer.fromSource(PROJECT_ROOT, local ? { NODE_IMAGE: await buildNodeBaseImage() } : {}) : new RegistryGatewayContainer(GATEWAY_IMAGE);
  return local ? container.withElasticsearch(await localElasticsearch(loadConfig().cacheDir)) : container;
}

/** Containers of the module's images still running. */
async function running(): Promise<string[]> {
  const client = await getContainerRuntimeClient();
  return (await client.container.list()).filter((c) => c.Image.includes('registry-query-gateway') || c.Image.includes('elasticsearch')).map((c) => `${c.Image} ${c.Id.slice(0, 12)}`);
}

describe.skipIf(!engine)(`the Testcontainers module (packages/testcontainers)${skipped}`, () => {
  let work: string;
  let bundleDir: string;
  let gateway: StartedRegistryGatewayContainer | undefined;
  let startedIn: number;

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'testcontainers-module-'));
    bundleDir = path.join(work, 'bundle');
    await writeBundle(bundleDir, { scale: 1, seed: 41 });
    const started = performance.now();
    gateway = await (await gatewayContainer(true)).withBundle(bundleDir).start();
    startedIn = (performance.now() - started) / 1000;
  }, 900_000);

  afterAll(async () => {
    await gateway?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('serves the bundle it was given: ready, its rows through its client, its export files', async () => {
    console.error(`[testcontainers-module] images built and the gateway ready in ${startedIn.toFixed(1)} s`);
    const manifest = await readManifest(bundleDir);
    const ready = await gateway!.getClient().get('/v1/ready');
    expect(ready.data).toMatchObject({ status: 'ready', generatedAt: manifest.generatedAt });
    const ids = (await readAllRows(bundleDir, 'killmails.jsonl')).filter((r) => r.environment === 'stillness').map((r) => String(r.id));
    const listed: string[] = [];
    for await (const row of gateway!.getClient().rows('/v1/killmails', { query: { cycles: 'all' } })) listed.push(String(row.id));
    expect(listed.sort()).toEqual([...new Set(ids)].sort());
    // The loader's copy of the files is where the gateway serves them from.
    const served = await fetch(`${gateway!.getHttpUrl()}/v1/exports/manifest.json`);
    expect(served.status).toBe(200);
    expect(await served.text()).toBe(await readFile(path.join(bundleDir, 'manifest.json'), 'utf8'));
  });

  it('serves a sample bundle the gateway writes itself (the generator’s, as written here), and stops whole', async () => {
    const before = await running();
    const sample = await (await gatewayContainer(false)).withSampleBundle().start();
    try {
      const local = path.join(work, 'sample');
      await writeBundle(local, { scale: 1 });
      const served = (await (await fetch(`${sample.getHttpUrl()}/v1/exports/manifest.json`)).json()) as { files: { path: string; sha256: string }[] };
      expect(served.files).toEqual((await readManifest(local)).files);
    } finally {
      await sample.stop();
    }
    expect(await running()).toEqual(before);
  }, 600_000);

  it("a bundle that does not load fails the start with the loader's own words, and leaves nothing running", async () => {
    const before = await running();
    const broken = path.join(work, 'broken');
    await writeBundle(broken, { scale: 1, seed: 42 });
    await appendFile(path.join(broken, 'entities.jsonl'), 'not json\n');
    const start = (await gatewayContainer(false)).withBundle(broken).start();
    await expect(start).rejects.toThrow(/the bundle was not loaded \(exit 1\)[\s\S]*entities\.jsonl:1: invalid JSON/);
    expect(await running()).toEqual(before);
  }, 300_000);
});
