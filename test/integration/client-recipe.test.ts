/**
 * The client recipe of docs/client-tests.md (examples/testcontainers/registry-gateway.ts) run as a client
 * runs it, so it cannot rot: Elasticsearch and the gateway in containers on a network of their
 * own, the gateway's image built from this repository's Dockerfile, a generated bundle loaded
 * once. Where images can be pulled that is the recipe's defaults (the official Elasticsearch,
 * the Dockerfile's node:24-slim); where they cannot (this project's machines), the same recipe
 * with images built FROM the local Debian base (test/support/local-images.ts).
 *
 * It needs a container engine (CI brings one up) and is skipped, saying so, without one. It does
 * not use the run's Elasticsearch: the recipe brings its own. Expected values come from the bundle
 * files; a broken bundle must fail the start with the loader's message (and leave nothing running).
 */
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RegistryGateway, type RegistryGatewayOptions, startRegistryGateway } from '../../examples/testcontainers/registry-gateway.ts';
import { readAllRows, readManifest } from '../../generator/read-bundle.ts';
import { writeBundle } from '../../generator/write-bundle.ts';
import { loadConfig, PROJECT_ROOT } from '../../src/config.ts';
import { containerEngineReachable, localBasePresent } from '../support/elasticsearch-container.ts';
import { buildNodeBaseImage, localElasticsearch } from '../support/local-images.ts';

const engine = await containerEngineReachable();
const skipped = engine ? '' : ' (skipped: no container engine reachable; DOCKER_HOST or the default socket, e.g. ../shared/tools/container-engine.sh up)';

describe.skipIf(!engine)(`the Testcontainers recipe for client tests (docs/client-tests.md)${skipped}`, () => {
  let work: string;
  let bundleDir: string;
  let gateway: RegistryGateway | undefined;
  let startedIn: number;

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'client-recipe-'));
    bundleDir = path.join(work, 'bundle');
    await writeBundle(bundleDir, { scale: 1, seed: 41 });
    const started = performance.now();
    gateway = await startRegistryGateway(await withLocalImages({ bundleDir, gateway: { source: PROJECT_ROOT } }));
    startedIn = (performance.now() - started) / 1000;
  }, 900_000);

  afterAll(async () => {
    await gateway?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('serves the bundle it was given: ready, its rows, its export files', async () => {
    console.error(`[client-recipe] images built and the gateway ready in ${startedIn.toFixed(1)} s`);
    const manifest = await readManifest(bundleDir);
    const ready = await fetch(`${gateway!.url}/v1/ready`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as any).data).toMatchObject({ status: 'ready', generatedAt: manifest.generatedAt });

    const ids = new Set((await readAllRows(bundleDir, 'entities.jsonl')).map((row) => String(row.id)));
    const list = await fetch(`${gateway!.url}/v1/entities?limit=1`);
    expect(list.status).toBe(200);
    const rows = ((await list.json()) as any).data;
    expect(rows).toHaveLength(1);
    expect(ids.has(rows[0].id)).toBe(true);

    // The loader's copy of the files is where the gateway serves them from.
    const served = await fetch(`${gateway!.url}/v1/exports/manifest.json`);
    expect(served.status).toBe(200);
    expect(await served.text()).toBe(await readFile(path.join(bundleDir, 'manifest.json'), 'utf8'));
  });

  it("a bundle that does not load ends the start with the loader's own words (the image given by its tag)", async () => {
    const broken = path.join(work, 'broken');
    await writeBundle(broken, { scale: 1, seed: 42 });
    await appendFile(path.join(broken, 'entities.jsonl'), 'not json\n');
    // The tag the first start built: the recipe's other way to name the gateway's image.
    const start = startRegistryGateway(await withLocalImages({ bundleDir: broken, gateway: { image: 'registry-query-gateway:local' } }));
    await expect(start).rejects.toThrow(/the bundle was not loaded \(exit 1\)[\s\S]*entities\.jsonl:1: invalid JSON/);
  }, 300_000);
});

/** Where nothing can be pulled, the recipe's images are replaced by ones built FROM the local base. */
async function withLocalImages(options: RegistryGatewayOptions): Promise<RegistryGatewayOptions> {
  if (!(await localBasePresent())) return options;
  const elasticsearch = await localElasticsearch(loadConfig().cacheDir);
  if ('image' in options.gateway) return { ...options, elasticsearch };
  return { ...options, elasticsearch, gateway: { ...options.gateway, buildArgs: { NODE_IMAGE: await buildNodeBaseImage() } } };
}
