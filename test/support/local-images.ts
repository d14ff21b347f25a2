/**
 * The images of the Testcontainers module (packages/testcontainers) where nothing can
 * be pulled (this project's machines: Podman, no registry), built FROM the local Debian base with
 * the same definitions `npm run compose:check` uses, and under the same tags, so either one's
 * build is the other's layer cache:
 *
 * - a Node 24 base (compose/local/node-base.Dockerfile) to build the project's Dockerfile FROM
 *   (its NODE_IMAGE build argument): this machine's Node binary and npm, and the extra
 *   certificate authorities its Node trusts, so `npm ci` in the build reaches the registry;
 * - Elasticsearch that behaves like the official image (compose/local/elasticsearch), running
 *   this machine's distribution and JDK, bind-mounted read-only.
 */
import { existsSync, realpathSync } from 'node:fs';
import { cp, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GenericContainer } from 'testcontainers';
import { ES_VERSION, findJava, installDistribution } from '../../scripts/elasticsearch.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
export const NODE_BASE_IMAGE = 'localhost/registry-gateway-node:24';
const ES_IMAGE = `localhost/registry-gateway-compose-elasticsearch:${ES_VERSION}`;
/** Copies into a build context keep their modification times: the engine's layer cache counts them. */
const keep = { preserveTimestamps: true } as const;

/** Builds the Node 24 base; returns its tag, for the project Dockerfile's NODE_IMAGE. */
export async function buildNodeBaseImage(): Promise<string> {
  const node = path.join(ROOT, 'node_modules/node/bin/node');
  if (!existsSync(node)) throw new Error('node_modules/node is missing: run npm ci first');
  return withContext('node-base', async (context) => {
    await cp(path.join(ROOT, 'compose/local/node-base.Dockerfile'), path.join(context, 'Dockerfile'), keep);
    await cp(realpathSync(node), path.join(context, 'node'), keep);
    await cp(npmRoot(), path.join(context, 'npm'), { ...keep, recursive: true });
    const extraCa = process.env.NODE_EXTRA_CA_CERTS;
    const ca = path.join(context, 'extra-ca.crt');
    if (extraCa) await cp(extraCa, ca, keep);
    else await writeFile(ca, '').then(() => utimes(ca, 0, 0));
    await GenericContainer.fromDockerfile(context).build(NODE_BASE_IMAGE, { deleteOnExit: false });
    return NODE_BASE_IMAGE;
  });
}

/** Elasticsearch for the module's `withElasticsearch`: built, not started. */
export async function localElasticsearch(cacheDir: string): Promise<GenericContainer> {
  const home = await installDistribution(cacheDir);
  const java = findJava();
  // The distribution's default config directory, which only root may read in the mount, goes into the image.
  await withContext('elasticsearch', async (context) => {
    await cp(path.join(ROOT, 'compose/local/elasticsearch'), context, { ...keep, recursive: true });
    await cp(path.join(home, 'config'), path.join(context, 'config'), { ...keep, recursive: true });
    await GenericContainer.fromDockerfile(context).build(ES_IMAGE, { deleteOnExit: false });
  });
  return new GenericContainer(ES_IMAGE).withBindMounts([
    { source: home, target: '/opt/elasticsearch', mode: 'ro' },
    { source: java, target: '/opt/java', mode: 'ro' },
  ]);
}

/** The npm this process would run: the package folder above the `npm` found on PATH. */
function npmRoot(): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const bin = path.join(dir, 'npm');
    if (dir && existsSync(bin)) return path.dirname(path.dirname(realpathSync(bin)));
  }
  throw new Error('npm is not on PATH');
}

async function withContext<T>(name: string, build: (context: string) => Promise<T>): Promise<T> {
  const context = await mkdtemp(path.join(tmpdir(), `image-${name}-`));
  try {
    return await build(context);
  } finally {
    await rm(context, { recursive: true, force: true });
  }
}
