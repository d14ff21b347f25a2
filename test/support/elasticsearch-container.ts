/**
 * Elasticsearch in a container through Testcontainers, for test runs where a container
 * engine is reachable.
 *
 * - An engine that can pull gets the official image, `elasticsearch:<ES_VERSION>`.
 * - An engine that cannot pull but has the local base image `localhost/debian:bookworm`
 *   (this project's machines: Podman, no registry) gets an image built FROM it, with this
 *   machine's distribution and JDK bind-mounted read-only: the same ES version either way.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GenericContainer, getContainerRuntimeClient, ImageName, type StartedTestContainer, Wait } from 'testcontainers';
import { chownTree, ES_VERSION, findJava, installDistribution, writeNodeConfig } from '../../scripts/elasticsearch.ts';

export const LOCAL_BASE = 'localhost/debian:bookworm';
const ES_PORT = 9200;
/** The container user: Elasticsearch refuses to run as root. */
const UID = 1000;

export interface StartedElasticsearch {
  url: string;
  describe: string;
  stop(): Promise<void>;
}

/** Whether a container engine answers (DOCKER_HOST, the default socket, ...). */
export async function containerEngineReachable(): Promise<boolean> {
  try {
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

/** Whether the engine has the local base image: then images are built FROM it, none pulled. */
export async function localBasePresent(): Promise<boolean> {
  const runtime = await getContainerRuntimeClient();
  return runtime.image.exists(ImageName.fromString(LOCAL_BASE));
}

export async function startElasticsearchContainer(cacheDir: string, heap = '1g'): Promise<StartedElasticsearch> {
  const ready = Wait.forHttp('/_cluster/health?wait_for_status=yellow&timeout=1s', ES_PORT).forStatusCode(200);
  if (!(await localBasePresent())) {
    const container = await new GenericContainer(`elasticsearch:${ES_VERSION}`)
      .withEnvironment({ 'discovery.type': 'single-node', 'xpack.security.enabled': 'false', ES_JAVA_OPTS: `-Xms${heap} -Xmx${heap}` })
      .withExposedPorts(ES_PORT)
      .withWaitStrategy(ready)
      .withStartupTimeout(180_000)
      .start();
    return started(container, `official image elasticsearch:${ES_VERSION}`);
  }

  const home = await installDistribution(cacheDir);
  const java = findJava();
  const work = await mkdtemp(path.join(tmpdir(), 'es-container-'));
  const context = path.join(work, 'image');
  const node = path.join(work, 'node');
  await mkdir(context);
  await writeFile(path.join(context, 'Dockerfile'), `FROM ${LOCAL_BASE}\nENTRYPOINT ["/opt/elasticsearch/bin/elasticsearch"]\n`);
  for (const dir of ['data', 'logs', 'tmp']) await mkdir(path.join(node, dir), { recursive: true });
  await writeNodeConfig(path.join(node, 'config'), home, { port: ES_PORT, heap, host: '0.0.0.0', dataPath: '/es/data', logsPath: '/es/logs' });
  await chownTree(node, UID, UID);

  const image = await GenericContainer.fromDockerfile(context).build(`registry-gateway-es:${ES_VERSION}`, { deleteOnExit: false });
  const container = await image
    .withUser(`${UID}:${UID}`)
    .withBindMounts([
      { source: home, target: '/opt/elasticsearch', mode: 'ro' },
      { source: java, target: '/opt/java', mode: 'ro' },
      { source: node, target: '/es', mode: 'rw' },
    ])
    .withEnvironment({ ES_JAVA_HOME: '/opt/java', ES_PATH_CONF: '/es/config', ES_TMPDIR: '/es/tmp' })
    .withExposedPorts(ES_PORT)
    .withWaitStrategy(ready)
    .withStartupTimeout(180_000)
    .start();
  const result = started(container, `container FROM ${LOCAL_BASE} with the ${ES_VERSION} distribution mounted`);
  return {
    ...result,
    async stop() {
      await result.stop();
      await rm(work, { recursive: true, force: true });
    },
  };
}

function started(container: StartedTestContainer, describe: string): StartedElasticsearch {
  return {
    url: `http://${container.getHost()}:${container.getMappedPort(ES_PORT)}`,
    describe,
    stop: async () => void (await container.stop()),
  };
}
