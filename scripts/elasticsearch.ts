/**
 * The one place that provides an Elasticsearch: `npm start`, the tests, the benchmarks and CI
 * all come through here.
 *
 * 1. `ES_URL` set: use it as it is.
 * 2. Else a node of our own, provisioned from Elastic's `integ-test-zip` distribution (the one
 *    build Maven Central carries), unpacked into the git-ignored cache, configured for a single
 *    node on loopback and started detached, so later runs reuse it.
 *
 * The node keeps its port across restarts (recorded in `state.json` beside it, and in its
 * `elasticsearch.yml`): a gateway that is already running finds it again when it comes back.
 *
 * The distribution stays read-only and shared; each node gets its own `ES_PATH_CONF`, data and
 * logs. That split is what lets the test setup bind-mount the very same distribution into a
 * container. Elasticsearch refuses to run as root, so as root the node runs as an unprivileged
 * user this script creates.
 */
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, openSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { chown, cp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Config } from '../src/config.ts';

/**
 * Pinned here and nowhere else. The newest release Maven Central carries as `integ-test-zip`
 * is 8.19.21 (there is no 9.x build of it); it runs on Java 17 or newer.
 */
export const ES_VERSION = '8.19.21';
const ARTIFACT = `org.elasticsearch.distribution.integ-test-zip:elasticsearch:${ES_VERSION}:zip`;
const MIN_JAVA = 17;
/** The unprivileged user a root session starts Elasticsearch as. */
const ES_USER = 'registry-es';
const READY_TIMEOUT_MS = 180_000;
/** How long `stop` waits for the node to exit, and a start for its old port to be released. */
const STOP_TIMEOUT_MS = 60_000;
const PORT_WAIT_MS = 15_000;

export type Log = (line: string) => void;

export interface ProvidedElasticsearch {
  url: string;
  /** How it was obtained, for the log line. */
  origin: 'ES_URL' | 'started' | 'reused';
}

export class ProvisionError extends Error {
  override name = 'ProvisionError';
}

const WAYS_OUT =
  'Ways out: set ES_URL to a running Elasticsearch 8.x or 9.x; or install a JDK (21 or newer) and Maven so the ' +
  'project can fetch and start one; or run everything with `docker compose up`.';

export async function provideElasticsearch(config: Pick<Config, 'esUrl' | 'cacheDir' | 'esHeap'>, log: Log = () => {}): Promise<ProvidedElasticsearch> {
  if (config.esUrl) return { url: config.esUrl.replace(/\/+$/, ''), origin: 'ES_URL' };
  const node = nodePaths(config.cacheDir);
  const state = await readState(node.state);
  if (state && (await clusterAnswers(state.url))) {
    log(`Elasticsearch ${ES_VERSION}: reusing ${state.url}`);
    return { url: state.url, origin: 'reused' };
  }
  const javaHome = findJava();
  const home = await installDistribution(config.cacheDir, log);
  const port = await choosePort(state?.url, log);
  const url = `http://127.0.0.1:${port}`;
  await prepareNode(node, home, { port, heap: config.esHeap });
  log(`Elasticsearch ${ES_VERSION}: starting on ${url} (java ${javaHome}, logs ${node.logs})`);
  const child = spawn(path.join(home, 'bin', 'elasticsearch'), ['-p', node.pid], {
    detached: true,
    stdio: ['ignore', openSync(node.stdout, 'a'), openSync(node.stdout, 'a')],
    env: { PATH: process.env.PATH, HOME: node.root, ES_JAVA_HOME: javaHome, ES_PATH_CONF: node.config, ES_TMPDIR: node.tmp },
    ...(await runAs()),
  });
  let exited: number | null = null;
  child.once('exit', (code) => (exited = code ?? -1));
  child.unref();
  await writeState(node.state, { url, version: ES_VERSION });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await clusterAnswers(url))) {
    if (exited !== null || Date.now() > deadline) {
      const tail = (await readFile(node.stdout, 'utf8').catch(() => '')).split('\n').slice(-15).join('\n');
      throw new ProvisionError(`Elasticsearch did not become ready (${exited !== null ? `exit ${exited}` : 'timeout'}); last output:\n${tail}`);
    }
    await sleep(500);
  }
  log(`Elasticsearch ${ES_VERSION}: ready on ${url}`);
  return { url, origin: 'started' };
}

/**
 * Stops the node `provideElasticsearch` started (no-op when none runs) and waits for it to
 * exit, so that a start right after it gets the same port. `state.json` is kept: it records
 * that port for the next start.
 */
export async function stopElasticsearch(config: Pick<Config, 'cacheDir'>, log: Log = () => {}): Promise<void> {
  const node = nodePaths(config.cacheDir);
  const pid = Number((await readFile(node.pid, 'utf8').catch(() => '')).trim());
  if (!pid || !alive(pid)) return log('Elasticsearch: not running');
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (alive(pid)) {
    if (Date.now() > deadline) return log(`Elasticsearch: pid ${pid} did not exit within ${STOP_TIMEOUT_MS / 1000} s`);
    await sleep(250);
  }
  log(`Elasticsearch: stopped (pid ${pid})`);
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else (we are not root).
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The port the node had before (from the recorded URL), so that gateways still pointed at it
 * find it again; a new free port only on the first start, or when another process took it.
 */
async function choosePort(previousUrl: string | undefined, log: Log): Promise<number> {
  const kept = previousUrl ? Number(new URL(previousUrl).port) : 0;
  if (!kept) return freePort();
  // A node that is still shutting down releases it within seconds.
  const deadline = Date.now() + PORT_WAIT_MS;
  while (!(await portFree(kept))) {
    if (Date.now() > deadline) {
      const port = await freePort();
      log(`Elasticsearch: port ${kept} is taken by another process; using ${port} (restart gateways that used ${previousUrl})`);
      return port;
    }
    await sleep(500);
  }
  return kept;
}

/**
 * The unpacked distribution, fetched once with Maven into the cache. Returns its home, which
 * nothing writes to (nodes keep config, data and logs elsewhere).
 */
export async function installDistribution(cacheDir: string, log: Log = () => {}): Promise<string> {
  const root = esRoot(cacheDir);
  const home = path.join(root, `elasticsearch-${ES_VERSION}`);
  if (existsSync(path.join(home, 'bin', 'elasticsearch'))) return home;
  const downloads = path.join(root, 'downloads');
  const zip = path.join(downloads, `elasticsearch-${ES_VERSION}.zip`);
  if (!existsSync(zip)) {
    if (!onPath('mvn')) throw new ProvisionError(`Maven (mvn) is needed to fetch Elasticsearch ${ES_VERSION}. ${WAYS_OUT}`);
    log(`Elasticsearch ${ES_VERSION}: fetching ${ARTIFACT} with Maven`);
    run('mvn', ['-q', '-B', 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy', `-Dartifact=${ARTIFACT}`, `-DoutputDirectory=${downloads}`]);
  }
  // Unpack beside the target and rename, so a concurrent or interrupted run never sees half a tree.
  const staging = await mkdirFresh(path.join(root, `unpack-${process.pid}`));
  if (onPath('unzip')) run('unzip', ['-q', zip, '-d', staging]);
  else run(path.join(findJava(), 'bin', 'jar'), ['xf', zip], staging);
  await rename(path.join(staging, `elasticsearch-${ES_VERSION}`), home).catch((error) => {
    if (!existsSync(home)) throw error;
  });
  await rm(staging, { recursive: true, force: true });
  return home;
}

/** A JDK to run Elasticsearch: ES_JAVA_HOME, JAVA_HOME, else the newest under /usr/lib/jvm. */
export function findJava(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = [env.ES_JAVA_HOME, env.JAVA_HOME].filter((dir): dir is string => Boolean(dir));
  const installed = existsSync('/usr/lib/jvm')
    ? readdirSync('/usr/lib/jvm')
        .map((name) => path.join('/usr/lib/jvm', name))
        .filter((dir) => javaVersion(dir) >= MIN_JAVA)
        .sort((a, b) => javaVersion(b) - javaVersion(a))
    : [];
  const found = [...explicit, ...installed].find((dir) => existsSync(path.join(dir, 'bin', 'java')));
  if (!found) throw new ProvisionError(`No Java ${MIN_JAVA} or newer found (ES_JAVA_HOME, JAVA_HOME, /usr/lib/jvm). ${WAYS_OUT}`);
  return found;
}

/** Why native nodes cannot run here (no Java, no distribution), or undefined when they can: for tests to skip, saying why. */
export async function nativeNodesMissing(cacheDir: string): Promise<string | undefined> {
  try {
    findJava();
    await installDistribution(cacheDir);
    return undefined;
  } catch (error) {
    if (error instanceof ProvisionError) return error.message.split('.')[0];
    throw error;
  }
}

/** The major version a JDK directory declares in its `release` file (0 when unknown). */
function javaVersion(dir: string): number {
  try {
    const match = /JAVA_VERSION="(\d+)/.exec(readFileSync(path.join(dir, 'release'), 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

interface NodePaths {
  root: string;
  config: string;
  data: string;
  logs: string;
  tmp: string;
  pid: string;
  stdout: string;
  state: string;
}

/** Where provisioned nodes live: the cache, or a temporary directory the node's user can reach. */
export function esRoot(cacheDir: string): string {
  // Elasticsearch runs as another user when we are root, and that user must be able to reach
  // the distribution and the node: a cache inside a private home directory cannot be used.
  const preferred = path.join(cacheDir, 'elasticsearch');
  return process.getuid?.() === 0 && !worldTraversable(cacheDir) ? path.join(tmpdir(), 'registry-gateway-elasticsearch') : preferred;
}

function nodePaths(cacheDir: string): NodePaths {
  const root = path.join(esRoot(cacheDir), 'node');
  return {
    root,
    config: path.join(root, 'config'),
    data: path.join(root, 'data'),
    logs: path.join(root, 'logs'),
    tmp: path.join(root, 'tmp'),
    pid: path.join(root, 'elasticsearch.pid'),
    stdout: path.join(root, 'logs', 'stdout.log'),
    state: path.join(esRoot(cacheDir), 'state.json'),
  };
}

export interface NodeSettings {
  port: number;
  heap: string;
  /** Address to listen on; a container listens on every interface so the mapped port works. */
  host?: string;
  /** Paths as the node sees them (they differ inside a container). */
  dataPath?: string;
  logsPath?: string;
  /** Join a cluster of several nodes instead of running single (scripts/elasticsearch-cluster.ts). */
  cluster?: ClusterMembership;
  /** More `elasticsearch.yml` settings (e.g. quicker fault detection for a rehearsal). */
  settings?: Record<string, string | number>;
}

/** How a node finds the other nodes of a cluster on loopback. */
export interface ClusterMembership {
  clusterName: string;
  nodeName: string;
  transportPort: number;
  /** Transport addresses (`<loopback address>:<port>`) of every node, this one included. */
  seedHosts: string[];
  /** Names of the master-eligible nodes that bootstrap a new cluster (every node here). */
  initialMasterNodes: string[];
}

/** The `elasticsearch.yml` lines that make a node single, or a member of a cluster. */
function discoveryLines(cluster: ClusterMembership | undefined): string[] {
  if (!cluster) return ['cluster.name: registry-gateway', 'node.name: registry-gateway-1', 'discovery.type: single-node'];
  return [
    `cluster.name: ${cluster.clusterName}`,
    `node.name: ${cluster.nodeName}`,
    `transport.port: ${cluster.transportPort}`,
    `discovery.seed_hosts: ${JSON.stringify(cluster.seedHosts)}`,
    `cluster.initial_master_nodes: ${JSON.stringify(cluster.initialMasterNodes)}`,
  ];
}

/**
 * Writes a node's config directory: the distribution's files plus our `elasticsearch.yml` and
 * heap. Written before the first start on purpose: a node started without it auto-configures
 * TLS and security, and that cannot be undone by editing the file later.
 */
export async function writeNodeConfig(configDir: string, home: string, settings: NodeSettings & { dataPath: string; logsPath: string }): Promise<void> {
  await mkdir(configDir, { recursive: true });
  await cp(path.join(home, 'config'), configDir, { recursive: true });
  const yml = [
    ...discoveryLines(settings.cluster),
    `network.host: ${settings.host ?? '127.0.0.1'}`,
    `http.port: ${settings.port}`,
    'xpack.security.enabled: false',
    'cluster.routing.allocation.disk.threshold_enabled: false',
    `path.data: ${settings.dataPath}`,
    `path.logs: ${settings.logsPath}`,
    ...Object.entries(settings.settings ?? {}).map(([key, value]) => `${key}: ${value}`),
    '',
  ].join('\n');
  await writeFile(path.join(configDir, 'elasticsearch.yml'), yml);
  await mkdir(path.join(configDir, 'jvm.options.d'), { recursive: true });
  await writeFile(path.join(configDir, 'jvm.options.d', 'heap.options'), `-Xms${settings.heap}\n-Xmx${settings.heap}\n`);
}

async function prepareNode(node: NodePaths, home: string, settings: NodeSettings): Promise<void> {
  await rm(node.config, { recursive: true, force: true });
  for (const dir of [node.data, node.logs, node.tmp]) await mkdir(dir, { recursive: true });
  await writeNodeConfig(node.config, home, { ...settings, dataPath: node.data, logsPath: node.logs });
  const owner = await runAs();
  if (owner.uid !== undefined) await chownTree(node.root, owner.uid, owner.gid!);
}

/**
 * As root: the uid/gid of an unprivileged user (the provisioned node's by default), created on
 * first use. Otherwise: nothing.
 */
export async function runAs(user = ES_USER): Promise<{ uid?: number; gid?: number }> {
  if (process.getuid?.() !== 0) return {};
  const id = () => spawnSync('id', ['-u', user], { encoding: 'utf8' });
  // Two test files may create the same user at once: useradd then fails (the user exists, or
  // /etc/passwd is locked) and the user is there a moment later.
  for (let attempt = 1; id().status !== 0; attempt++) {
    try {
      run('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', user]);
    } catch (error) {
      if (attempt === 10) throw error;
      await sleep(200);
    }
  }
  const uid = Number(id().stdout.trim());
  const gid = Number(spawnSync('id', ['-g', user], { encoding: 'utf8' }).stdout.trim());
  return { uid, gid };
}

export async function chownTree(dir: string, uid: number, gid: number): Promise<void> {
  await chown(dir, uid, gid);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(full, uid, gid);
    else await chown(full, uid, gid);
  }
}

function worldTraversable(dir: string): boolean {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    if (existsSync(current) && (statSync(current).mode & 0o001) === 0) return false;
    if (current === path.dirname(current)) return true;
  }
}

export async function clusterAnswers(url: string): Promise<boolean> {
  try {
    // GET / answers 405 on this distribution, so readiness is the cluster health.
    const response = await fetch(`${url}/_cluster/health?wait_for_status=yellow&timeout=2s`, { signal: AbortSignal.timeout(5_000) });
    return response.ok;
  } catch {
    return false;
  }
}

/** A port free on `host` (a loopback address) right now. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Whether `port` can be bound on loopback right now. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function readState(file: string): Promise<{ url: string } | undefined> {
  try {
    const state = JSON.parse(await readFile(file, 'utf8'));
    return state.version === ES_VERSION && typeof state.url === 'string' ? state : undefined;
  } catch {
    return undefined;
  }
}

async function writeState(file: string, state: { url: string; version: string }): Promise<void> {
  await writeFile(file, `${JSON.stringify(state)}\n`);
}

async function mkdirFresh(dir: string): Promise<string> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  return dir;
}

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
    try {
      accessSync(path.join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Runs a tool quietly; its output is shown only when it fails. */
function run(command: string, args: string[], cwd?: string): void {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().split('\n').slice(-20).join('\n');
    throw new ProvisionError(`${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal}):\n${output}`);
  }
}
