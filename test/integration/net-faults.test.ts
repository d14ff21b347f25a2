/**
 * The rehearsal's bad links, made for real (scripts/net/): nothing here is stubbed.
 *
 * - A link proxy in front of a real HTTP server passes, black-holes (a request on an open
 *   keep-alive connection and one on a new connection both time out), passes again when healed,
 *   delays each way and throttles.
 * - The store client (the gateway's and the follower's) through a proxy to moto slowed past its
 *   timeout: its read times out; healed, it reads.
 * - Our iptables chain goes away with its process (SIGINT) and, left by a process that is gone,
 *   at the next open.
 * - Three native nodes on their own addresses and users: one node cut from the other two (they
 *   report two nodes, it reports no master), healed (three again); the elected master cut (the
 *   other two elect one of themselves); packet loss on one node (a share of new connections to
 *   it fails, none before or after); the cluster's nodes behind proxies black-holed (a client cut
 *   from every node) and healed.
 *
 * Where the machine cannot (no Java or distribution; not root; no iptables) the cases are
 * skipped, saying why.
 */
import { spawn, spawnSync } from 'node:child_process';
import { type Server, createServer } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClusterNode, type LocalCluster, QUICK_FAULT_DETECTION, startCluster } from '../../scripts/elasticsearch-cluster.ts';
import { nativeNodesMissing } from '../../scripts/elasticsearch.ts';
import { type ClusterNetwork, clusterNetwork } from '../../scripts/net/cluster-faults.ts';
import { firewallUnavailable, openFirewall } from '../../scripts/net/firewall.ts';
import { type LinkProxy, startLinkGroup, startLinkProxy } from '../../scripts/net/link-proxy.ts';
import { type MotoServer, startMoto } from '../../harness/moto.ts';
import { loadConfig, PROJECT_ROOT } from '../../src/config.ts';
import { createObjectStore } from '../../src/store/object-store.ts';
import { META_INDEX, aliasName, indexName } from '../../src/indices/generation.ts';
import { createClient } from '../../src/search/client.ts';
import { createSearchService } from '../../src/search/search-service.ts';

/** Milliseconds one GET through `url` takes, or the error it ended with (a fresh connection unless `keepAlive`). */
async function timedGet(url: string, timeoutMs: number, fresh = false): Promise<{ ms: number; status?: number; error?: string; bytes?: number }> {
  const started = performance.now();
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: fresh ? { connection: 'close' } : {} });
    const bytes = (await response.arrayBuffer()).byteLength;
    return { ms: performance.now() - started, status: response.status, bytes };
  } catch (error) {
    return { ms: performance.now() - started, error: (error as Error).name };
  }
}

describe('a link proxy in front of an HTTP server', () => {
  let server: Server;
  let proxy: LinkProxy;
  const body = Buffer.alloc(100_000, 'x');

  beforeAll(async () => {
    server = createServer((req, res) => res.end(req.url === '/big' ? body : 'ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = await startLinkProxy(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
  });
  afterAll(async () => {
    await proxy?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('passes, black-holes open and new connections, passes again when healed', async () => {
    const passed = await timedGet(`${proxy.url}/`, 2000);
    expect(passed.status).toBe(200);
    expect(proxy.connections()).toBe(1); // the keep-alive connection the next request reuses

    proxy.set({ kind: 'blackhole' });
    const [open, fresh] = await Promise.all([timedGet(`${proxy.url}/`, 1500), timedGet(`${proxy.url}/`, 1500, true)]);
    console.log(`link proxy: black-holed requests ended after ${open.ms.toFixed(0)} / ${fresh.ms.toFixed(0)} ms (${open.error}, ${fresh.error})`);
    expect(open.error).toBe('TimeoutError');
    expect(fresh.error).toBe('TimeoutError');

    proxy.set({ kind: 'pass' });
    const healed = await timedGet(`${proxy.url}/`, 2000, true);
    expect(healed.status).toBe(200);
    expect(healed.ms).toBeLessThan(500);
  });

  it('delays each way, and throttles', async () => {
    proxy.set({ kind: 'slow', delayMs: 400 });
    const delayed = await timedGet(`${proxy.url}/`, 5000, true);
    proxy.set({ kind: 'slow', delayMs: 0, bytesPerSecond: 50_000 });
    const throttled = await timedGet(`${proxy.url}/big`, 10_000, true);
    proxy.set({ kind: 'pass' });
    const healed = await timedGet(`${proxy.url}/big`, 2000, true);
    console.log(`link proxy: 400 ms each way → ${delayed.ms.toFixed(0)} ms; 100 kB at 50 kB/s → ${throttled.ms.toFixed(0)} ms; healed ${healed.ms.toFixed(0)} ms`);
    expect(delayed.status).toBe(200);
    // The request one way and the answer the other (and the connection's handshake is not delayed).
    expect(delayed.ms).toBeGreaterThanOrEqual(800);
    expect(throttled.bytes).toBe(body.length);
    expect(throttled.ms).toBeGreaterThanOrEqual(1900);
    expect(healed.ms).toBeLessThan(500);
  });
});

describe('the object store’s link slowed past its timeout', () => {
  let moto: MotoServer;
  let proxy: LinkProxy;

  beforeAll(async () => {
    moto = await startMoto();
    await moto.createBucket('net');
    await moto.store().put('s3://net/a', Buffer.from('hello'), { contentType: 'text/plain' });
    proxy = await startLinkProxy(moto.endpoint);
  });
  afterAll(async () => {
    await proxy?.close();
    await moto?.stop();
  });

  it('fails the store client’s reads while slow, and not once healed', async () => {
    // The store client as the gateway and the follower make it, pointed at the proxy; one attempt.
    const store = createObjectStore({ ...moto.config(), endpoint: proxy.url, timeoutMs: 1000, attempts: 1 });
    const read = async () => {
      const started = performance.now();
      const outcome = await store.get('s3://net/a').then((fetched) => (fetched.status === 'ok' ? fetched.bytes.toString() : fetched.status), (error: Error) => error.message);
      return { outcome, ms: Math.round(performance.now() - started) };
    };
    const before = await read();
    proxy.set({ kind: 'slow', delayMs: 1500 });
    const slowed = await read();
    proxy.set({ kind: 'pass' });
    const healed = await read();
    console.log(`store link 1.5 s each way, timeout 1 s: ${JSON.stringify({ before, slowed, healed })}`);
    expect(before.outcome).toBe('hello');
    expect(slowed.outcome).toMatch(/no answer for 1000 ms \(ETIMEDOUT\)/);
    expect(slowed.ms).toBeGreaterThanOrEqual(1000);
    expect(healed.outcome).toBe('hello');
  });
});

const noFirewall = firewallUnavailable();
if (noFirewall) console.warn(`iptables faults skipped: ${noFirewall}`);

/** Our chains in the filter table now. */
const ourChains = () => spawnSync('iptables', ['-w', '-S'], { encoding: 'utf8' }).stdout.split('\n').filter((line) => /RNET-/.test(line));

describe.skipIf(noFirewall !== undefined)(`our iptables chain${noFirewall ? ` (skipped: ${noFirewall})` : ''}`, () => {
  it('goes with its process on SIGINT, and a dead process’s chain at the next open', async () => {
    const script = `import { openFirewall } from '${PROJECT_ROOT}/scripts/net/firewall.ts'; console.log(openFirewall().chain); setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const chain = await new Promise<string>((resolve) => child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())));
    expect(ourChains()).toContain(`-N ${chain}`);
    child.kill('SIGINT');
    const [, signal] = await new Promise<[number | null, string | null]>((resolve) => child.once('exit', (...args) => resolve(args)));
    expect(signal).toBe('SIGINT');
    expect(ourChains().filter((line) => line.includes(chain))).toEqual([]);

    // What a SIGKILLed run leaves: a chain of a pid that no longer runs, and its jump.
    const gone = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' }).stdout.trim();
    const left = `RNET-${gone}-1`;
    spawnSync('iptables', ['-w', '-N', left]);
    spawnSync('iptables', ['-w', '-I', 'OUTPUT', '1', '-j', left]);
    expect(ourChains()).toContain(`-A OUTPUT -j ${left}`);
    openFirewall().close();
    expect(ourChains().filter((line) => line.includes(left))).toEqual([]);
  });
});

const config = loadConfig({});
// No cluster setting changed: the partitions take the time they take in the rehearsal.
const missing = (await nativeNodesMissing(config.cacheDir)) ?? noFirewall;
if (missing) console.warn(`partition test skipped: ${missing}`);

interface View {
  master?: string;
  nodes: string[];
}

/** The cluster as `node` itself holds it (local state: answers without a master too). */
async function viewOf(cluster: LocalCluster, node: ClusterNode): Promise<View | undefined> {
  try {
    const response = await fetch(`${node.url}/_cluster/state/nodes,master_node?local=true`, { signal: AbortSignal.timeout(5000) });
    const state = (await response.json()) as { master_node?: string; nodes: Record<string, { name: string }> };
    return { master: Object.entries(state.nodes).find(([id]) => id === state.master_node)?.[1].name, nodes: Object.values(state.nodes).map((n) => n.name).sort() };
  } catch {
    return undefined;
  }
}

/** Polls until `done` holds; returns the seconds it took, or throws with the last views. */
async function until(what: string, cluster: LocalCluster, done: (views: (View | undefined)[]) => boolean, timeoutMs = 120_000): Promise<number> {
  const started = performance.now();
  let views: (View | undefined)[] = [];
  while (performance.now() - started < timeoutMs) {
    views = await Promise.all(cluster.nodes.map((node) => viewOf(cluster, node)));
    if (done(views)) return Math.round((performance.now() - started) / 100) / 10;
    await sleep(500);
  }
  throw new Error(`${what}: not within ${timeoutMs / 1000} s; views: ${JSON.stringify(views)}`);
}

/** New TCP connections to `node`'s HTTP port that do not complete within `timeoutMs`, of `count`. */
async function failedConnects(node: ClusterNode, count: number, timeoutMs = 250): Promise<number> {
  const once = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect(node.httpPort, node.host);
      const timer = setTimeout(() => (socket.destroy(), resolve(false)), timeoutMs);
      socket.once('connect', () => (clearTimeout(timer), socket.destroy(), resolve(true)));
      socket.once('error', () => (clearTimeout(timer), resolve(false)));
    });
  let failed = 0;
  for (let i = 0; i < count; i += 10) failed += (await Promise.all(Array.from({ length: 10 }, once))).filter((ok) => !ok).length;
  return failed;
}

describe.skipIf(missing !== undefined)(`three nodes on their own addresses, partitioned${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let cluster: LocalCluster;
  let net: ClusterNetwork;
  const all = (views: (View | undefined)[], n: number) => views.every((view) => view?.master && view.nodes.length === n);

  beforeAll(async () => {
    cluster = await startCluster({ cacheDir: config.cacheDir, name: `net-${process.pid}`, heap: '384m', jvmOptions: ['-XX:TieredStopAtLevel=1'], settings: QUICK_FAULT_DETECTION });
    net = clusterNetwork(cluster.nodes);
  });
  afterAll(async () => {
    net?.close();
    await cluster?.stop();
  });

  it('is green with three nodes, each on its own address and user', async () => {
    expect(new Set(cluster.nodes.map((node) => node.host)).size).toBe(3);
    expect(new Set(cluster.nodes.map((node) => node.user?.uid)).size).toBe(3);
    const health = (await (await fetch(`${cluster.nodes[0]!.url}/_cluster/health`)).json()) as { status: string; number_of_nodes: number };
    expect(health).toMatchObject({ status: 'green', number_of_nodes: 3 });
    await until('three nodes in every view', cluster, (views) => all(views, 3));
  });

  /** Cuts `node` from the other two until `apart` holds of every view, heals, and waits for three nodes again. */
  async function cutOff(node: ClusterNode, apart: (view: View | undefined, cut: boolean) => boolean): Promise<{ apart: number; whole: number }> {
    const fault = net.partition([node]);
    expect(fault).toMatchObject({ made: true });
    try {
      const took = await until(`${node.name} cut off`, cluster, (views) => views.every((view, j) => apart(view, cluster.nodes[j] === node)));
      if (fault.made) fault.heal();
      return { apart: took, whole: await until('three nodes again', cluster, (views) => all(views, 3)) };
    } finally {
      if (fault.made) fault.heal();
    }
  }

  it('cuts one node from the other two, and heals', { timeout: 240_000 }, async () => {
    const master = await cluster.electedMaster();
    const cut = cluster.nodes.find((node) => node !== master)!;
    // The other two keep their master and see two nodes; the cut one knows no master.
    const { apart, whole } = await cutOff(cut, (view, isCut) => (isCut ? view !== undefined && !view.master : view?.master === master.name && view.nodes.length === 2 && !view.nodes.includes(cut.name)));
    console.log(`partition ${cut.name} | the other two: apart after ${apart} s (they see 2 nodes, it no master), whole ${whole} s after healing`);
  });

  it('a gateway that reaches only a node cut off from the master never serves the generation its stale alias still names', { timeout: 240_000 }, async () => {
    const master = await cluster.electedMaster();
    const cut = cluster.nodes.find((node) => node !== master)!;
    const prefix = `stale-${process.pid}`;
    const alias = aliasName(prefix, META_INDEX);
    const es = createClient(master.url, 30_000);
    const generationOf = async (generation: string) => {
      const index = indexName(prefix, META_INDEX, generation);
      // The one copy on the node to be cut: what it reads through its alias it answers itself, at once.
      await es.indices.create({ index, settings: { number_of_shards: 1, number_of_replicas: 0, 'index.routing.allocation.require._name': cut.name } });
      await es.index({ index, id: generation, document: { generation }, refresh: true });
      await es.cluster.health({ index, wait_for_status: 'green', timeout: '60s' });
      return index;
    };
    const [first, second] = [await generationOf('g1'), await generationOf('g2')];
    await es.indices.putAlias({ index: first, name: alias });
    const gateway = createSearchService({ client: createClient(cut.url, 30_000), prefix, liveCacheMs: 0, warmRequests: 0 });
    expect((await gateway.live())?.generation).toBe('g1');
    const fault = net.partition([cut]);
    expect(fault).toMatchObject({ made: true });
    try {
      // Once the two have let the cut node go (before, the master waits on it to publish), the swap on their side.
      await until(`${cut.name} cut off`, cluster, (views) => views.every((view, j) => (cluster.nodes[j] === cut ? view !== undefined && !view.master : view?.master === master.name && view.nodes.length === 2)));
      await es.indices.updateAliases({ actions: [{ remove: { index: first, alias } }, { add: { index: second, alias } }] });
      expect(Object.keys((await es.indices.getAlias({ name: alias })) as object)).toEqual([second]);
      // The cut node's own view (its own copy) still names the first generation...
      const stale = (await (await fetch(`${cut.url}/${alias}/_search?size=1&preference=_local`, { signal: AbortSignal.timeout(20_000) })).json()) as { hits: { hits: { _source: { generation: string } }[] } };
      expect(stale.hits.hits[0]?._source.generation).toBe('g1');
      // ...which the gateway never answers: the new one, or a failure (a 503 to its clients), until the cut heals.
      for (let i = 0; i < 3; i += 1) {
        const started = performance.now();
        const live = await gateway.live().then((doc) => doc?.generation, (error: unknown) => (error as { code?: string }).code ?? 'failed');
        console.log(`lookup ${i} through the cut node: ${live} after ${Math.round(performance.now() - started)} ms`);
        expect(live, `lookup ${i}`).not.toBe('g1');
      }
    } finally {
      if (fault.made) fault.heal();
    }
    await until('three nodes again', cluster, (views) => all(views, 3));
    await es.cluster.health({ index: second, wait_for_status: 'green', timeout: '60s' });
    expect((await gateway.live())?.generation).toBe('g2');
    await es.indices.delete({ index: [first, second] });
  });

  it('cuts the elected master: the other two elect one of themselves, and heals', { timeout: 240_000 }, async () => {
    const master = await cluster.electedMaster();
    let elected: string | undefined;
    // The old master steps down; the other two agree on one of themselves.
    const { apart, whole } = await cutOff(master, (view, isCut) => {
      if (isCut) return view !== undefined && !view.master;
      elected = view?.master;
      return elected !== undefined && elected !== master.name;
    });
    console.log(`master ${master.name} cut: ${elected} elected, the old one stepped down, after ${apart} s; whole ${whole} s after healing`);
  });

  it('drops a share of packets on one node’s links, and none once healed', { timeout: 120_000 }, async () => {
    const node = cluster.nodes[0]!;
    expect(await failedConnects(node, 100)).toBe(0);
    const fault = net.loss(node, 0.3);
    expect(fault).toMatchObject({ made: true });
    const failed = await failedConnects(node, 300);
    // The cluster keeps talking through it: its own packets are dropped too.
    await sleep(3000);
    const dropped = net.dropped();
    if (fault.made) fault.heal();
    const after = await failedConnects(node, 100);
    console.log(`loss 30% on ${node.name}: ${failed}/300 new connections failed within 250 ms; ${dropped} packets dropped; ${after}/100 after healing`);
    // A lost SYN or SYN-ACK is sent again only after a second: a connect fails when either of
    // the two is dropped, 1 - 0.7² = 51% of the time (±0.12 is four standard deviations).
    expect(failed / 300).toBeGreaterThan(0.51 - 0.12);
    expect(failed / 300).toBeLessThan(0.51 + 0.12);
    expect(dropped).toBeGreaterThanOrEqual(failed);
    expect(after).toBe(0);
  });

  it('cuts a client from every node through proxies, and heals', async () => {
    const group = await startLinkGroup(cluster.esUrl);
    try {
      const health = (url: string) => timedGet(`${url}/_cluster/health`, 2000);
      expect((await Promise.all(group.proxies.map((p) => health(p.url)))).map((r) => r.status)).toEqual([200, 200, 200]);
      group.set({ kind: 'blackhole' });
      expect((await Promise.all(group.proxies.map((p) => health(p.url)))).map((r) => r.error)).toEqual(['TimeoutError', 'TimeoutError', 'TimeoutError']);
      group.set({ kind: 'pass' });
      expect((await Promise.all(group.proxies.map((p) => health(p.url)))).map((r) => r.status)).toEqual([200, 200, 200]);
    } finally {
      await group.close();
    }
  });

  it('leaves no rule of ours behind once closed', () => {
    net.close();
    expect(net.partition([cluster.nodes[0]!])).toMatchObject({ made: false });
    expect(ourChains().filter((line) => line.includes(`RNET-${process.pid}-`))).toEqual([]);
  });
});
