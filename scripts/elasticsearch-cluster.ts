/**
 * A throwaway Elasticsearch cluster on loopback for `npm run cluster` and its integration test:
 * three (or more) nodes of the project's distribution, each with its own HTTP and transport
 * port, config, data and logs, all master-eligible data nodes that find each other through
 * `discovery.seed_hosts` and bootstrap with `cluster.initial_master_nodes`.
 *
 * Each node listens on a loopback address of its own (127.0.0.11, .12, …) and, as root, runs as
 * a system user of its own (`registry-es-1`, …): the kernel gives an outgoing connection the
 * source 127.0.0.1 whatever address it goes to, so it is by its owner and by where it goes that
 * a firewall rule tells one node's traffic from another's (scripts/net/cluster-faults.ts cuts
 * and degrades links that way). Loopback addresses, published too: Elasticsearch enforces its
 * production bootstrap checks once the transport publishes any other.
 *
 * Distribution, Java, the unprivileged users and the node config come from
 * scripts/elasticsearch.ts. Unlike the provisioned single node, a cluster is never reused: it
 * starts from empty data directories every time and lives only as long as its caller. Nodes are
 * signalled only through the pid each one wrote (never by name), so other sessions' nodes are
 * safe.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chownTree, esRoot, findJava, freePort, installDistribution, type Log, ProvisionError, runAs, writeNodeConfig } from './elasticsearch.ts';

const READY_TIMEOUT_MS = 180_000;
const STOP_TIMEOUT_MS = 30_000;

export interface ClusterNode {
  name: string;
  url: string;
  /** The loopback address it listens on (HTTP and transport), its own. */
  host: string;
  httpPort: number;
  transportPort: number;
  /** The system user it runs as (root only; otherwise it runs as the caller). */
  user?: { name: string; uid: number };
  /** The `bin/elasticsearch` launcher; the server JVM is its child and writes `pidFile`. */
  launcher: ChildProcess;
  pidFile: string;
  logFile: string;
  /** Settles with the launcher's exit code once the node is gone. */
  exited: Promise<number | null>;
  alive: boolean;
}

export interface LocalCluster {
  nodes: ClusterNode[];
  /** Every node's URL, in the `ES_URL` list form. */
  esUrl: string;
  /** The node the cluster elected master, as the living nodes report it. */
  electedMaster(): Promise<ClusterNode>;
  /** Kills one node's server JVM with SIGKILL (no shutdown of any kind) and waits until it is gone. */
  kill(node: ClusterNode): Promise<void>;
  /** Starts a killed node again on its data and waits until it has joined (the cluster whole again; not green). */
  restart(node: ClusterNode): Promise<void>;
  /** Waits until every node is in the cluster again (after a partition healed; not green). */
  rejoined(): Promise<void>;
  /** Stops every node still running (SIGTERM, SIGKILL after 30 s); removes the files unless `keep`. */
  stop(options?: { keep?: boolean }): Promise<void>;
}

/**
 * Settings under which a node cut off is noticed in seconds rather than the default half minute
 * (checks every second, 3 s to answer, 2 retries), so that a partition of a few tens of seconds is
 * one the cluster acts on: the rehearsal's and the partition tests' clusters.
 */
export const QUICK_FAULT_DETECTION: Readonly<Record<string, string | number>> = {
  'cluster.fault_detection.follower_check.interval': '1s',
  'cluster.fault_detection.follower_check.timeout': '3s',
  'cluster.fault_detection.follower_check.retry_count': 2,
  'cluster.fault_detection.leader_check.interval': '1s',
  'cluster.fault_detection.leader_check.timeout': '3s',
  'cluster.fault_detection.leader_check.retry_count': 2,
};

export interface ClusterOptions {
  cacheDir: string;
  /** Directory name under the nodes' root; an earlier cluster of the same name is stopped and wiped. */
  name: string;
  heap: string;
  size?: number;
  /** Extra JVM options for every node (e.g. `-XX:TieredStopAtLevel=1` for a faster start). */
  jvmOptions?: string[];
  /**
   * More `elasticsearch.yml` settings for every node. With the defaults a node cut off is noticed
   * after about 33 s (three leader or follower checks of 10 s) and the master cut off is replaced
   * in about 35 s, its removal published 30 s later (`cluster.publish.timeout`): a shorter
   * `cluster.fault_detection.*.timeout` makes partitions tell sooner.
   */
  settings?: Record<string, string | number>;
  log?: Log;
}

export async function startCluster(options: ClusterOptions): Promise<LocalCluster> {
  const { cacheDir, name, heap, size = 3, jvmOptions = [], settings, log = () => {} } = options;
  const javaHome = findJava();
  const home = await installDistribution(cacheDir, log);
  const root = path.join(esRoot(cacheDir), 'clusters', name);
  await stopLeftovers(root);
  await rm(root, { recursive: true, force: true });

  const specs: { name: string; host: string; port: number; transportPort: number; dir: string; user: string }[] = [];
  for (let i = 1; i <= size; i++) {
    const host = nodeHost(i);
    specs.push({ name: `${name}-${i}`, host, port: await freePort(host), transportPort: await freePort(host), dir: path.join(root, `node-${i}`), user: `registry-es-${i}` });
  }
  const membership = {
    // A cluster name of its own: a node of another cluster that happens to reuse a port is refused.
    clusterName: `registry-gateway-${name}`,
    seedHosts: specs.map((spec) => `${spec.host}:${spec.transportPort}`),
    initialMasterNodes: specs.map((spec) => spec.name),
  };
  for (const spec of specs) {
    for (const dir of ['data', 'logs', 'tmp']) await mkdir(path.join(spec.dir, dir), { recursive: true });
    await writeNodeConfig(path.join(spec.dir, 'config'), home, {
      port: spec.port,
      host: spec.host,
      heap,
      settings,
      dataPath: path.join(spec.dir, 'data'),
      logsPath: path.join(spec.dir, 'logs'),
      cluster: { ...membership, nodeName: spec.name, transportPort: spec.transportPort },
    });
    if (jvmOptions.length) await writeFile(path.join(spec.dir, 'config', 'jvm.options.d', 'cluster.options'), `${jvmOptions.join('\n')}\n`);
  }
  const owners = await Promise.all(specs.map((spec) => runAs(spec.user)));
  for (const [i, owner] of owners.entries()) if (owner.uid !== undefined) await chownTree(specs[i]!.dir, owner.uid, owner.gid!);

  log(`cluster ${name}: starting ${size} nodes of Elasticsearch (heap ${heap} each, files in ${root})`);
  /** Starts (or starts again) a node's server on its own directory: its data survives a restart. */
  const launch = (spec: (typeof specs)[number], node?: ClusterNode): ClusterNode => {
    const owner = owners[specs.indexOf(spec)]!;
    const logFile = path.join(spec.dir, 'logs', 'stdout.log');
    const pidFile = path.join(spec.dir, 'elasticsearch.pid');
    rmSync(pidFile, { force: true });
    const launcher = spawn(path.join(home, 'bin', 'elasticsearch'), ['-p', pidFile], {
      stdio: ['ignore', openSync(logFile, 'a'), openSync(logFile, 'a')],
      env: { PATH: process.env.PATH, HOME: spec.dir, ES_JAVA_HOME: javaHome, ES_PATH_CONF: path.join(spec.dir, 'config'), ES_TMPDIR: path.join(spec.dir, 'tmp') },
      ...owner,
    });
    const user = owner.uid === undefined ? undefined : { name: spec.user, uid: owner.uid };
    const started = node ?? ({ name: spec.name, url: `http://${spec.host}:${spec.port}`, host: spec.host, httpPort: spec.port, transportPort: spec.transportPort, user, pidFile, logFile } as ClusterNode);
    Object.assign(started, { launcher, alive: true });
    started.exited = new Promise((resolve) => launcher.once('exit', (code) => resolve(code)));
    void started.exited.then(() => (started.alive = false));
    return started;
  };
  const nodes: ClusterNode[] = specs.map((spec) => launch(spec));

  const cluster: LocalCluster = {
    nodes,
    esUrl: nodes.map((node) => node.url).join(','),
    async electedMaster() {
      for (const node of nodes.filter((n) => n.alive)) {
        const answer = await getJson(`${node.url}/_cat/master?format=json`);
        const master = nodes.find((n) => n.name === (answer as { node?: string }[] | undefined)?.[0]?.node);
        if (master) return master;
      }
      throw new ProvisionError(`cluster ${name}: no living node knows an elected master`);
    },
    async kill(node) {
      signalServer(node, 'SIGKILL');
      await node.exited;
    },
    async restart(node) {
      if (node.alive) return;
      launch(specs[nodes.indexOf(node)]!, node);
      await waitForNodes(cluster, size, false);
    },
    rejoined: () => waitForNodes(cluster, size, false),
    async stop({ keep = false } = {}) {
      await Promise.all(nodes.filter((node) => node.alive).map((node) => stopNode(node)));
      if (!keep) await rm(root, { recursive: true, force: true });
    },
  };
  try {
    await waitForNodes(cluster, size);
  } catch (error) {
    await cluster.stop({ keep: true });
    throw error;
  }
  log(`cluster ${name}: ${size} nodes formed one cluster (${cluster.esUrl})`);
  return cluster;
}

/** Node i's own loopback address (i from 1): 127.0.0.11, 127.0.0.12, … */
export function nodeHost(i: number): string {
  return `127.0.0.${10 + i}`;
}

/** Waits until a node reports every node joined and (at the start: the cluster is empty) the cluster green. */
async function waitForNodes(cluster: LocalCluster, size: number, green = true): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const first = cluster.nodes.find((node) => node.alive) ?? cluster.nodes[0]!;
    const health = await getJson(`${first.url}/_cluster/health?wait_for_nodes=${size}${green ? '&wait_for_status=green' : ''}&timeout=2s`);
    if (health && (health as { timed_out?: boolean }).timed_out === false) return;
    const gone = cluster.nodes.find((node) => !node.alive);
    if (gone || Date.now() > deadline) {
      const culprit = gone ?? first;
      const tail = (await readFile(culprit.logFile, 'utf8').catch(() => '')).split('\n').slice(-15).join('\n');
      throw new ProvisionError(`cluster node ${culprit.name} ${gone ? 'exited' : 'did not join in time'}; last output:\n${tail}`);
    }
    await sleep(500);
  }
}

async function stopNode(node: ClusterNode): Promise<void> {
  signalServer(node, 'SIGTERM');
  const stopped = await Promise.race([node.exited.then(() => true), sleep(STOP_TIMEOUT_MS, false, { ref: false })]);
  if (!stopped) {
    signalServer(node, 'SIGKILL');
    node.launcher.kill('SIGKILL');
    await node.exited;
  }
}

/** Signals the server JVM (the pid the node wrote); before it wrote one, the launcher. */
function signalServer(node: ClusterNode, signal: NodeJS.Signals): void {
  const pid = Number(existsSync(node.pidFile) ? readFileSync(node.pidFile, 'utf8').trim() : '');
  try {
    if (pid) process.kill(pid, signal);
    else node.launcher.kill(signal);
  } catch {
    // Already gone.
  }
}

/**
 * Kills server JVMs a previous run of the same cluster left behind (an interrupted script):
 * only pids read from this cluster's own pid files whose command line names this cluster's
 * directory, so a recycled pid is never hit.
 */
async function stopLeftovers(root: string): Promise<void> {
  for (let i = 1; existsSync(path.join(root, `node-${i}`)); i++) {
    const pid = Number((await readFile(path.join(root, `node-${i}`, 'elasticsearch.pid'), 'utf8').catch(() => '')).trim());
    const command = pid ? await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '') : '';
    if (!command.includes(path.join(root, `node-${i}`))) continue;
    process.kill(pid, 'SIGKILL');
    for (let wait = 0; wait < 100 && existsSync(`/proc/${pid}`); wait++) await sleep(100);
  }
}

async function getJson(url: string): Promise<unknown> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    return response.ok ? await response.json() : undefined;
  } catch {
    return undefined;
  }
}
