/**
 * The registry gateway in a client's integration tests, in testcontainers-node's shape:
 * `RegistryGatewayContainer` starts Elasticsearch and the gateway's image on a network of their
 * own, loads the bundle it is given once in the gateway's container (so the export files the
 * loader keeps are where `/v1/exports` serves them from), and is started once `/v1/ready` answers
 * 200; a bundle that does not load fails `start()` with the loader's own message and stops what
 * was started.
 */
import { AbstractStartedContainer, GenericContainer, Network, type StartedNetwork, type StartedTestContainer, type StoppedTestContainer, Wait } from 'testcontainers';
import { type RegistryClient, createRegistryClient } from '@registry-gateway/client';

/** The Elasticsearch version the gateway is tested against. */
export const ELASTICSEARCH_IMAGE = 'docker.elastic.co/elasticsearch/elasticsearch:8.19.21';
/** The tag `fromSource` builds, and the image used when none is given. */
export const GATEWAY_IMAGE = 'registry-query-gateway:local';

const PORT = 8080;
const BUNDLE = '/bundle';
/** How long the gateway may take to serve a bundle once it is loaded. */
const READY_MS = 10_000;

/**
 * Elasticsearch configured as the gateway needs it: one node, no security, no disk watermark (a
 * nearly full disk would make its indices read-only), ready once its cluster is yellow.
 */
export function elasticsearchContainer(image: string | GenericContainer = ELASTICSEARCH_IMAGE): GenericContainer {
  return (typeof image === 'string' ? new GenericContainer(image) : image)
    .withEnvironment({ 'discovery.type': 'single-node', 'xpack.security.enabled': 'false', 'cluster.routing.allocation.disk.threshold_enabled': 'false', ES_JAVA_OPTS: '-Xms512m -Xmx512m' })
    .withExposedPorts(9200)
    .withWaitStrategy(Wait.forHttp('/_cluster/health?wait_for_status=yellow&timeout=1s', 9200))
    .withStartupTimeout(180_000);
}

export class RegistryGatewayContainer extends GenericContainer {
  #bundleDir: string | undefined;
  #sampleScale: number | undefined;
  #elasticsearch: GenericContainer | undefined;

  /** The gateway's image: a tag you have (`GATEWAY_IMAGE` once `fromSource` built it). */
  constructor(image = GATEWAY_IMAGE) {
    super(image);
    // RATE_LIMIT off: a test suite asks faster than one client is allowed to.
    this.withExposedPorts(PORT).withEnvironment({ ES_URL: 'http://elasticsearch:9200', RATE_LIMIT: 'off' }).withWaitStrategy(Wait.forHttp('/v1/health', PORT)).withStartupTimeout(120_000);
  }

  /** The gateway built from a checkout of its repository (its Dockerfile), kept so that the next build comes from the layer cache. */
  static async fromSource(directory: string, buildArgs: Record<string, string> = {}): Promise<RegistryGatewayContainer> {
    await GenericContainer.fromDockerfile(directory).withBuildArgs(buildArgs).build(GATEWAY_IMAGE, { deleteOnExit: false });
    return new RegistryGatewayContainer(GATEWAY_IMAGE);
  }

  /** Serves this bundle: a folder with manifest.json, catalog.json, the JSONL files and ops_*.json. */
  withBundle(directory: string): this {
    this.#bundleDir = directory;
    return this.withCopyDirectoriesToContainer([{ source: directory, target: BUNDLE }]);
  }

  /** Serves a generated sample bundle (the gateway's own generator, `scale` 1: about 5,600 rows). */
  withSampleBundle(scale = 1): this {
    this.#sampleScale = scale;
    return this;
  }

  /** Elasticsearch 8.19 to start in place of the official image: another image, or a container of one, configured by `elasticsearchContainer`. */
  withElasticsearch(container: string | GenericContainer): this {
    this.#elasticsearch = elasticsearchContainer(container);
    return this;
  }

  override async start(): Promise<StartedRegistryGatewayContainer> {
    if (this.#bundleDir === undefined && this.#sampleScale === undefined) throw new Error('give the gateway a bundle: .withBundle(directory) or .withSampleBundle()');
    const network = await new Network().start();
    const started: StartedTestContainer[] = [];
    try {
      started.push(await (this.#elasticsearch ?? elasticsearchContainer()).withNetwork(network).withNetworkAliases('elasticsearch').start());
      const gateway = await this.withNetwork(network).startGateway();
      started.push(gateway);
      if (this.#sampleScale !== undefined) await run(gateway, ['node', 'generator/cli.ts', BUNDLE, '--scale', String(this.#sampleScale)], 'the sample bundle was not written');
      await run(gateway, ['node', 'loader/cli.ts', BUNDLE], 'the bundle was not loaded');
      const url = `http://${gateway.getHost()}:${gateway.getMappedPort(PORT)}`;
      // The gateway answers 503 on /v1/ready until the load is live and warmed.
      const deadline = Date.now() + READY_MS;
      while ((await fetch(`${url}/v1/ready`)).status !== 200) {
        if (Date.now() > deadline) throw new Error(`the gateway was not ready ${READY_MS / 1000} s after the load`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      return new StartedRegistryGatewayContainer(gateway, started[0]!, network);
    } catch (error) {
      await stopAll(started, network);
      throw error;
    }
  }

  /** GenericContainer's own start (this class's `start` adds Elasticsearch and the load around it). */
  private startGateway(): Promise<StartedTestContainer> {
    return super.start();
  }
}

export class StartedRegistryGatewayContainer extends AbstractStartedContainer {
  readonly #elasticsearch: StartedTestContainer;
  readonly #network: StartedNetwork;
  #client: RegistryClient | undefined;

  constructor(gateway: StartedTestContainer, elasticsearch: StartedTestContainer, network: StartedNetwork) {
    super(gateway);
    this.#elasticsearch = elasticsearch;
    this.#network = network;
  }

  /** Where the gateway answers, e.g. `http://localhost:32768` (routes under /v1). */
  getHttpUrl(): string {
    return `http://${this.getHost()}:${this.getMappedPort(PORT)}`;
  }

  /** A typed client of this gateway (@registry-gateway/client). */
  getClient(): RegistryClient {
    this.#client ??= createRegistryClient({ baseUrl: this.getHttpUrl() });
    return this.#client;
  }

  /** Stops the gateway, then its Elasticsearch and their network. */
  override async stop(options?: Parameters<StartedTestContainer['stop']>[0]): Promise<StoppedTestContainer> {
    const stopped = await super.stop(options);
    await this.#elasticsearch.stop();
    await this.#network.stop();
    return stopped;
  }
}

/** Runs a command in the gateway's container; its output is the error's message when it fails. */
async function run(container: StartedTestContainer, command: string[], failure: string): Promise<void> {
  const result = await container.exec(command);
  if (result.exitCode !== 0) throw new Error(`${failure} (exit ${result.exitCode}):\n${result.output}`);
}

async function stopAll(containers: StartedTestContainer[], network: StartedNetwork): Promise<void> {
  for (const container of containers.reverse()) await container.stop();
  await network.stop();
}
