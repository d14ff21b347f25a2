/**
 * The registry gateway in your own integration tests, through Testcontainers: Elasticsearch, then
 * the gateway's image, in which the loader loads the bundle you give it once. Copy this file into
 * your tests; it needs `testcontainers` (a dev dependency) and a container engine (Docker, Podman).
 */
import { setTimeout } from 'node:timers/promises';
import { GenericContainer, Network, type StartedNetwork, type StartedTestContainer, Wait } from 'testcontainers';

/** The Elasticsearch version the gateway is tested against. */
export const ELASTICSEARCH_IMAGE = 'docker.elastic.co/elasticsearch/elasticsearch:8.19.21';

export interface RegistryGatewayOptions {
  /** The bundle to serve: a folder with manifest.json, catalog.json, the JSONL files and ops_*.json. */
  bundleDir: string;
  /** The gateway's image: a tag you have, or built from a checkout of its repository (its Dockerfile). */
  gateway: { image: string } | { source: string; buildArgs?: Record<string, string> };
  /** Elasticsearch 8.19 to start instead of ELASTICSEARCH_IMAGE (configured here like the official image). */
  elasticsearch?: GenericContainer;
  /** More of the gateway's environment (README: Configuration). */
  environment?: Record<string, string>;
}

export interface RegistryGateway {
  /** Where the gateway answers, e.g. http://localhost:32768 (routes under /v1). */
  url: string;
  stop(): Promise<void>;
}

export async function startRegistryGateway(options: RegistryGatewayOptions): Promise<RegistryGateway> {
  const { gateway } = options;
  // The built image is kept (no deleteOnExit), so the next run's build comes from the layer cache.
  const gatewayContainer = 'image' in gateway ? new GenericContainer(gateway.image)
    : await GenericContainer.fromDockerfile(gateway.source).withBuildArgs(gateway.buildArgs ?? {}).build('registry-query-gateway:local', { deleteOnExit: false });
  const network = await new Network().start();
  const started: StartedTestContainer[] = [];
  try {
    started.push(await (options.elasticsearch ?? new GenericContainer(ELASTICSEARCH_IMAGE))
      .withNetwork(network)
      .withNetworkAliases('elasticsearch')
      // One node without security; no disk watermark, so a nearly full disk does not make the indices read-only.
      .withEnvironment({ 'discovery.type': 'single-node', 'xpack.security.enabled': 'false', 'cluster.routing.allocation.disk.threshold_enabled': 'false', ES_JAVA_OPTS: '-Xms512m -Xmx512m' })
      .withExposedPorts(9200)
      .withWaitStrategy(Wait.forHttp('/_cluster/health?wait_for_status=yellow&timeout=1s', 9200))
      .withStartupTimeout(180_000)
      .start());
    // RATE_LIMIT off: a test suite asks faster than one client is allowed to.
    const server = await gatewayContainer
      .withNetwork(network)
      .withEnvironment({ ES_URL: 'http://elasticsearch:9200', RATE_LIMIT: 'off', ...options.environment })
      .withCopyDirectoriesToContainer([{ source: options.bundleDir, target: '/bundle' }])
      .withExposedPorts(8080)
      .withWaitStrategy(Wait.forHttp('/v1/health', 8080))
      .start();
    started.push(server);
    // The loader runs once in the gateway's container, so the export files it keeps are where the
    // gateway serves /v1/exports from. The gateway answers 503 on /v1/ready until the load is live.
    const load = await server.exec(['node', 'loader/cli.ts', '/bundle']);
    if (load.exitCode !== 0) throw new Error(`the bundle was not loaded (exit ${load.exitCode}):\n${load.output}`);
    const url = `http://${server.getHost()}:${server.getMappedPort(8080)}`;
    for (let attempt = 1; (await fetch(`${url}/v1/ready`)).status !== 200; attempt++) {
      if (attempt === 20) throw new Error('the gateway was not ready 10 s after the load');
      await setTimeout(500);
    }
    return { url, stop: () => stopAll(started, network) };
  } catch (error) {
    await stopAll(started, network);
    throw error;
  }
}

async function stopAll(containers: StartedTestContainer[], network: StartedNetwork): Promise<void> {
  for (const container of containers.reverse()) await container.stop();
  await network.stop();
}
