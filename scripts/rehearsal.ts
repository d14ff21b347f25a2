/**
 * `npm run rehearsal -- [--minutes M] [--seed S] [--scale N] [--no-faults] [--sabotage KIND|seeded]`: the whole deployment on loopback
 * under a seeded nemesis, every part real, then a checker over what happened.
 *
 * - three Elasticsearch nodes (scripts/elasticsearch-cluster.ts), `ES_REPLICAS=1`;
 * - an S3 store (moto) the run publishes the registry's next export to every few tens of seconds
 *   (new events and killmails on top, a late arrival, an entity changed and one removed), with one
 *   rollback in the run, and a follower (`loader/cli.ts --follow`) taking them in;
 * - two gateways of `WORKERS=2` sharing budgets through `redis-server` (`RATE_LIMIT_STORE`);
 * - clients, each from its own loopback address: event streams (one filtered) that reconnect with
 *   `Last-Event-ID`, one that stops reading, a `since_indexed` walker, a polite client on list and
 *   detail routes, a greedy one over its budget, downloads (`format=ndjson`);
 * - the nemesis, seeded: SIGKILLs an Elasticsearch node (the elected master among them) and starts
 *   it again, SIGKILLs a gateway worker, SIGTERMs a whole gateway and starts it again, SIGSTOPs
 *   Redis for 5–20 s and the store past its timeout, SIGKILLs the follower and starts it again;
 *   and bad links (scripts/net/): a node cut from the other two, the elected master cut from the
 *   rest, 30 % of a node's packets lost, a gateway cut from every node, the store's link slowed
 *   past its timeout, each healed after a while. A fault the machine cannot make (iptables
 *   missing, not root) is recorded as skipped and counted apart.
 *
 * `--sabotage KIND` runs it with one defect planted from outside the product and no nemesis
 * (scripts/rehearsal-sabotage.ts; `seeded`: the kind the seed picks): it exits 1 when the checker
 * names the invariant that defect breaks, 3 when it does not (or the defect was never planted).
 *
 * The history (faults, publications, generations live, every answer, rows delivered, RSS) is
 * written to `.cache/rehearsal/<seed>.json`; the checker (scripts/rehearsal-checks.ts) compares it
 * with the bundle files of every publication. Exits 1 on any broken invariant, naming it with
 * the fault that preceded it, and prints the seed so that a run can be replayed.
 */
import type { ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { writeNextExport } from '../generator/next-export.ts';
import { publishBundle } from '../generator/publish.ts';
import { type BundleRow, readRows } from '../generator/read-bundle.ts';
import { createRandom } from '../generator/random.ts';
import { writeBundle } from '../generator/write-bundle.ts';
import { IDENTITY, expectedCounts } from '../harness/bundle-counts.ts';
import { loaderExit, spawnFollower, spawnLoader } from '../harness/loader-process.ts';
import { type Listener, spawnListener } from '../harness/listener.ts';
import { startMoto } from '../harness/moto.ts';
import { childPids, rssMb } from '../harness/proc.ts';
import { startRedisServer } from '../harness/redis-server.ts';
import { openSse } from '../harness/sse.ts';
import { PROJECT_ROOT, loadConfig } from '../src/config.ts';
import { type GenerationDoc, META_INDEX, aliasName, parseIndexName } from '../src/indices/generation.ts';
import { QUICK_FAULT_DETECTION, startCluster } from './elasticsearch-cluster.ts';
import { freePort } from './elasticsearch.ts';
import { type Fault as NetFault, clusterNetwork } from './net/cluster-faults.ts';
import { type LinkGroup, startLinkGroup, startLinkProxy } from './net/link-proxy.ts';
import { type Entry, type Expected, check, gatewaySide } from './rehearsal-checks.ts';
import { CAUGHT_AS, PLANT_AFTER, SABOTAGE_KINDS, SABOTAGE_MINUTES, type SabotageKind, deleteOneRow, isProxyFault, planter, startFaultyProxy } from './rehearsal-sabotage.ts';

const { values } = parseArgs({ options: { minutes: { type: 'string' }, seed: { type: 'string' }, scale: { type: 'string' }, 'no-faults': { type: 'boolean' }, sabotage: { type: 'string' } } });
const seed = Number(values.seed ?? Math.floor(Math.random() * 1_000_000));
if (values.sabotage !== undefined && values.sabotage !== 'seeded' && !(SABOTAGE_KINDS as readonly string[]).includes(values.sabotage)) {
  console.error(`--sabotage: one of ${SABOTAGE_KINDS.join(', ')}, or seeded`);
  process.exit(2);
}
/** The defect planted, if any (`seeded`: the seed picks it). */
const sabotage = values.sabotage === 'seeded' ? SABOTAGE_KINDS[seed % SABOTAGE_KINDS.length]! : (values.sabotage as SabotageKind | undefined);
/** `--no-faults`: the same run without the nemesis, the baseline its lags are read against; a sabotage run has none either. */
const faultless = values['no-faults'] === true || sabotage !== undefined;
/** A sabotaged run is as long as its defect needs to be seen (SABOTAGE_MINUTES); a clean one 3 minutes. */
const minutes = Number(values.minutes ?? (sabotage ? SABOTAGE_MINUTES[sabotage] : 3));
const scale = Number(values.scale ?? 2);
const PREFIX = 'rehearsal';
const STORE_TIMEOUT_MS = 4000;
const started = Date.now();
const now = () => Date.now() - started;
const log = (line: string) => console.error(`[rehearsal ${(now() / 1000).toFixed(1)} s] ${line}`);
const history: Entry[] = [];
type Unstamped<T> = T extends unknown ? Omit<T, 'at'> & { at?: number } : never;
const record = (entry: Unstamped<Entry>): void => void history.push({ at: now(), ...entry } as Entry);

const replay = `--minutes ${minutes} --seed ${seed} --scale ${scale}${sabotage ? ` --sabotage ${sabotage}` : ''}`;
log(`seed ${seed}, ${minutes} min, scale ${scale}${sabotage ? `, sabotage ${sabotage}` : ''} (replay: npm run rehearsal -- ${replay})`);
const random = createRandom(seed, 'nemesis');
const config = loadConfig();
// A fresh clone has no cache folder yet.
await mkdir(config.cacheDir, { recursive: true });
const work = await mkdtemp(path.join(config.cacheDir, 'rehearsal-'));
/** What a run leaves behind for a look afterwards: its history and its gateways' logs. */
const records = path.join(config.cacheDir, 'rehearsal');
await mkdir(records, { recursive: true });
/** Each gateway's log (its warnings: why it answered an error), kept beside the run's history, across restarts. */
const gatewayLog = (i: number) => path.join(records, `${seed}-gateway-${i}.log`);
await Promise.all([0, 1].map((i) => rm(gatewayLog(i), { force: true })));
/** Everything the follower wrote (each load's steps and figures, each failure whole), across its restarts. */
const followerLog = createWriteStream(path.join(records, `${seed}-follower.log`));
const cleanups: (() => Promise<unknown>)[] = [];
let stopping = false;
// A rejection nobody awaited (a bug of the run's own clients) ends the run as a failure, and
// still stops what it started: nodes, store, Redis and gateways never outlive it.
/** Stops everything the run started and exits: nodes, store, Redis, gateways and firewall rules never outlive it. */
function abandon(why: string, code: number): void {
  log(why);
  stopping = true;
  void (async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    await rm(work, { recursive: true, force: true });
    process.exit(code);
  })();
}
process.once('unhandledRejection', (error) => abandon(`the rehearsal failed: ${(error as Error)?.stack ?? String(error)}`, 1));
// Stopped from outside (Ctrl-C, a CI timeout): the same cleanup.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => abandon(`stopped by ${signal}`, 130));

// --- the deployment -------------------------------------------------------------------------
const cluster = await startCluster({ cacheDir: config.cacheDir, name: 'rehearsal', heap: '384m', jvmOptions: ['-XX:TieredStopAtLevel=1'], settings: QUICK_FAULT_DETECTION, log });
cleanups.push(() => cluster.stop());
const net = clusterNetwork(cluster.nodes);
cleanups.push(async () => net.close());
const moto = await startMoto();
cleanups.push(() => moto.stop());
await moto.createBucket('registry');
const source = 's3://registry/export';
const store = moto.store();
const redis = await startRedisServer();
cleanups.push(() => redis.stop());

// The store is reached through a link the nemesis can slow (the follower's and the gateways' reads; the publisher writes directly).
const storeLink = await startLinkProxy(moto.env.AWS_ENDPOINT_URL_S3!);
cleanups.push(() => storeLink.close());
const env = {
  ES_URL: cluster.esUrl,
  ES_REPLICAS: '1',
  INDEX_PREFIX: PREFIX,
  DATA_DIR: path.join(work, 'data'),
  LOG_LEVEL: 'warn',
  STORE_TIMEOUT_MS: String(STORE_TIMEOUT_MS),
  STORE_ATTEMPTS: '4',
  ...moto.env,
  AWS_ENDPOINT_URL_S3: storeLink.url,
};

/** Publications: their directories and bundle ids, in order, and the documents each must give (from its files). */
const publications: { dir: string; bundleId: string; counts: Record<string, number> }[] = [];
async function publish(dir: string): Promise<void> {
  const { bundleId } = await publishBundle(dir, source, { store });
  publications.push({ dir, bundleId, counts: await expectedCounts(dir) });
  record({ kind: 'publication', index: publications.length - 1, bundleId });
  log(`published export ${publications.length - 1} (${bundleId.slice(0, 12)})`);
}
const first = path.join(work, 'export-0');
await writeBundle(first, { scale, seed });
await publish(first);
const firstRows = async (file: string) => {
  const out: BundleRow[] = [];
  for await (const { row } of readRows(first, file)) out.push(row);
  return out;
};
const firstEvents = new Set((await firstRows('events.jsonl')).map((r) => String(r.id)));

/** The follower: `npm run load -- --follow`, its own process; started again after a kill. */
let follower: ChildProcess | undefined;
function startFollower(): void {
  follower = spawnFollower(source, env, {
    onLine: (line) => {
      followerLog.write(`${new Date().toISOString()} pid ${follower?.pid} ${line}\n`);
      if (/loaded|error|refused|failed/i.test(line)) log(`follower: ${line.trim().slice(0, 160)}`);
    },
  });
}
startFollower();
cleanups.push(async () => follower?.kill('SIGTERM'));

/** The live generation, as Elasticsearch holds it (recorded each time it changes). */
let live: GenerationDoc | undefined;
/**
 * The live generation document and the documents in every live alias a bundle file feeds, as
 * the gateway reads them: one search over the meta alias and all of them (its aliases resolved
 * once, so a swap never falls between two counts), its documents by concrete index; a search
 * that missed a shard (a node down) is asked again of another node, never taken as a count.
 */
async function readLive(): Promise<{ doc: GenerationDoc; counts: Record<string, number> } | undefined> {
  const aliases = [META_INDEX, ...Object.keys(IDENTITY)].map((index) => aliasName(PREFIX, index)).join(',');
  const body = { size: 1, post_filter: { prefix: { _index: `${aliasName(PREFIX, META_INDEX)}-` } }, aggs: { indices: { terms: { field: '_index', size: 100 } } } };
  for (const node of cluster.nodes.filter((n) => n.alive)) {
    try {
      const response = await fetch(`${node.url}/${aliases}/_search?ignore_unavailable=true&allow_partial_search_results=false`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(3000),
      });
      if (!response.ok) continue;
      const answer = (await response.json()) as { _shards: { failed: number }; hits: { hits: { _source: GenerationDoc }[] }; aggregations: { indices: { buckets: { key: string; doc_count: number }[] } } };
      const doc = answer.hits.hits[0]?._source;
      if (answer._shards.failed > 0 || !doc) continue;
      const counts: Record<string, number> = {};
      for (const { key, doc_count } of answer.aggregations.indices.buckets) {
        const index = parseIndexName(PREFIX, key)?.index;
        if (index && index !== META_INDEX) counts[index] = doc_count;
      }
      return { doc, counts };
    } catch {
      // Another node.
    }
  }
  return undefined;
}
/** `--sabotage row-short`: when the second generation goes live, one of its first export's events deleted behind the loader's back. */
let rowDeleted: string | undefined;
async function deleteRowOnce(): Promise<boolean> {
  if (sabotage !== 'row-short' || rowDeleted !== undefined || live === undefined) return false;
  const node = cluster.nodes.find((n) => n.alive)!;
  rowDeleted = await deleteOneRow(node.url, aliasName(PREFIX, 'events'), { terms: { id: [...firstEvents].slice(0, 100) } });
  log(`sabotage: deleted event ${rowDeleted} from the live generation`);
  return true;
}
const watcher = (async () => {
  while (!stopping) {
    let read = await readLive();
    if (read && read.doc.generation !== live?.generation && (await deleteRowOnce())) read = await readLive();
    if (read && read.doc.generation !== live?.generation) {
      live = read.doc;
      record({ kind: 'live', generation: live.generation, bundleId: live.bundleId, counts: read.counts });
      log(`live: ${live.generation} (${live.bundleId.slice(0, 12)})`);
    }
    await sleep(500);
  }
})();
async function waitLive(bundleId: string, ms = 180_000): Promise<void> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(250)) if (live?.bundleId === bundleId) return;
  throw new Error(`bundle ${bundleId.slice(0, 12)} did not go live in ${ms / 1000} s`);
}
await waitLive(publications[0]!.bundleId);
const startedThrough = live!.indexedAt!;

/** The gateways: two of two workers each, on ports of their own (started again on the same). */
/** `RATE_LIMIT=50/100`: 100 points a window of 2 s; the greedy client's list pages cost 2 each. */
const BUDGET = { points: 100, windowMs: 2000, cost: 2 };
// At `debug` a gateway logs each request as it reads it and as it answers (src/http/middleware/request-log.ts): the checker matches clients' losses with them.
const gatewayEnv = { ...env, LOG_LEVEL: 'debug', WORKERS: '2', RATE_LIMIT: `${BUDGET.points / (BUDGET.windowMs / 1000)}/${BUDGET.points}`, RATE_LIMIT_STORE: redis.url, STREAMS_PER_CLIENT: '50', MAX_CONNECTIONS_PER_CLIENT: 'off' };
const ports = [await freePort(), await freePort()];
/** Where the faulty proxies of a sabotage run listen and connect from: an address no client uses. */
const PROXY_ADDRESS = '127.0.0.9';
/** Each gateway reaches the nodes through links of its own, which the nemesis can cut. */
const esLinks: LinkGroup[] = await Promise.all(ports.map(() => startLinkGroup(cluster.esUrl)));
cleanups.push(async () => Promise.all(esLinks.map((links) => links.close())));
const gateways: (Listener | undefined)[] = [];
/** A gateway's settings: `--sabotage budget-apart` starts the second without the shared store, `leak` the first with a module that leaks. */
function gatewayEnvOf(i: number): Record<string, string> {
  const own: Record<string, string> = { ...gatewayEnv, PORT: String(ports[i]), ES_URL: esLinks[i]!.urls };
  if (sabotage === 'budget-apart' && i === 1) delete own.RATE_LIMIT_STORE;
  // Faulty proxies forward each client's own address: a client stays itself behind them.
  if (sabotage && isProxyFault(sabotage)) own.TRUSTED_PROXIES = PROXY_ADDRESS;
  if (sabotage === 'leak' && i === 0) own.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --import=${path.join(PROJECT_ROOT, 'scripts', 'rehearsal-leak.ts')}`.trim();
  return own;
}
async function startGateway(i: number): Promise<void> {
  gateways[i] = await spawnListener(path.join(PROJECT_ROOT, 'src', 'server.ts'), gatewayEnvOf(i), gatewayLog(i));
}
await Promise.all([startGateway(0), startGateway(1)]);
cleanups.push(async () => Promise.all(gateways.map((g) => g?.stop())));
const direct = (i: number) => `http://127.0.0.1:${ports[i]}`;
/** `--sabotage` of a proxy's kind: every client reaches the gateways through faulty proxies that plant one defect between them. */
const plant = sabotage && isProxyFault(sabotage) ? planter(PLANT_AFTER[sabotage]) : undefined;
const proxies = plant && isProxyFault(sabotage!) ? await Promise.all(ports.map((_, i) => startFaultyProxy(direct(i), sabotage as Parameters<typeof startFaultyProxy>[1], plant, PROXY_ADDRESS))) : undefined;
cleanups.push(async () => Promise.all(proxies?.map((p) => p.stop()) ?? []));
const base = (i: number) => proxies?.[i]!.url ?? direct(i);

// --- clients ----------------------------------------------------------------------------------
/** A client's connections, from its own loopback address. */
class ClientAgent extends Agent {
  readonly address: string;
  constructor(address: string) {
    super({ keepAlive: true, localAddress: address, maxSockets: 16 });
    this.address = address;
  }
}
const agentFor = (address: string) => new ClientAgent(address);

/**
 * One GET from a client's own loopback address; the answer recorded, with the gateway asked and
 * when it was sent. As HTTP/1.1 asks of a client (RFC 9112 §9.3.1), a GET whose reused
 * keep-alive connection the server closed before any answer — a gateway closing its idle
 * connections as it stops — is sent again once, on a connection of its own (another idle one
 * of the pool may be closing too), and both are recorded; a connection lost any other way, the
 * second try's included, is recorded as lost.
 */
async function get(client: string, agent: ClientAgent, url: string): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const sent = (sentBy.get(client) ?? 0) + 1;
  sentBy.set(client, sent);
  const requestId = `${client}-${sent}`;
  const first = await getOnce(client, agent, url, requestId);
  if (!first.retry) return first;
  record({ kind: 'answer', client, path: new URL(url).pathname, status: 0, error: 'closed while idle: sent again', gateway: gatewayOf(url), sent: first.sent, requestId });
  return getOnce(client, new Agent({ localAddress: agent.address }), url, `${requestId}.2`);
}
/** Requests sent by each client: their `X-Request-Id` is `<client>-<n>` (`.2` when sent again), which the gateways log. */
const sentBy = new Map<string, number>();

const gatewayOf = (url: string) => {
  const port = Number(new URL(url).port);
  const proxied = proxies?.findIndex((p) => p.port === port) ?? -1;
  return proxied >= 0 ? proxied : ports.indexOf(port);
};

function getOnce(client: string, agent: Agent, url: string, requestId: string): Promise<{ status: number; body: string; headers: Record<string, unknown>; retry?: boolean; sent: number }> {
  const { pathname, search } = new URL(url);
  const sent = now();
  const answered = { client, gateway: gatewayOf(url), sent, requestId };
  return new Promise((resolve) => {
    const req = request(url, { agent, timeout: 30_000, headers: { 'X-Request-Id': requestId } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        record({ kind: 'answer', ...answered, path: pathname + search.slice(0, 80), status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined });
        resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString(), headers: res.headers, sent });
      });
      res.on('error', (error) => {
        record({ kind: 'answer', ...answered, path: pathname, status: 0, error: String((error as NodeJS.ErrnoException).code ?? error.message) });
        resolve({ status: 0, body: '', headers: {}, sent });
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (error) => {
      const code = String((error as NodeJS.ErrnoException).code ?? error.message);
      if (req.reusedSocket && code === 'ECONNRESET') return resolve({ status: 0, body: '', headers: {}, retry: true, sent });
      record({ kind: 'answer', ...answered, path: pathname, status: 0, error: code, fresh: !req.reusedSocket });
      resolve({ status: 0, body: '', headers: {}, sent });
    });
    req.end();
  });
}

const entities = await firstRows('entities.jsonl');
const detailEntity = entities.find((e) => e.environment === 'stillness' && e.entityType === 'system')!;
const clients: Promise<void>[] = [];

// A polite client: five requests a second over lists and details, on the first gateway.
clients.push(
  (async () => {
    const agent = agentFor('127.0.0.2');
    const paths = ['/v1/events?limit=20', '/v1/killmails?limit=20', '/v1/entities?limit=20', `/v1/entities/${encodeURIComponent(String(detailEntity.id))}`, '/v1/battles?cycles=all&limit=10'];
    for (let i = 0; !stopping; i += 1) {
      await get('polite', agent, `${base(0)}${paths[i % paths.length]}`);
      await sleep(200);
    }
  })(),
);
// A greedy client over its budget, on both gateways: each of its loops alternates them request by
// request, so that every window's spending falls on both.
clients.push(
  ...[0, 1, 2, 3].map((n) =>
    (async () => {
      const agent = agentFor('127.0.0.3');
      for (let i = 0; !stopping; i += 1) {
        const { status } = await get('greedy', agent, `${base((n + i) % 2)}/v1/events?limit=50`);
        if (status === 429) await sleep(200);
      }
    })(),
  ),
);
// Downloads.
clients.push(
  (async () => {
    const agent = agentFor('127.0.0.4');
    for (let i = 0; !stopping; i += 1) {
      await get('download', agent, `${base(i % 2)}/v1/killmails?cycles=all&format=ndjson`);
      await sleep(5000);
    }
  })(),
);
// A walker: complete `since_indexed` walks only move it on.
let walkerThrough = startedThrough;
clients.push(
  (async () => {
    const agent = agentFor('127.0.0.5');
    for (let i = 0; !stopping; i += 1) {
      const url = `${base(i % 2)}/v1/events?cycles=all&sort=indexedAt:asc&limit=200&since_indexed=${walkerThrough}`;
      const ids: string[] = [];
      let next: string | undefined = url;
      let through: string | undefined;
      while (next) {
        const { status, body } = await get('walker', agent, next);
        if (status !== 200) break;
        const page = JSON.parse(body) as { data: BundleRow[]; meta: { indexedThrough?: string }; nextCursor?: string };
        through ??= page.meta.indexedThrough;
        ids.push(...page.data.map((r) => String(r.id)));
        next = page.nextCursor ? `${url}&cursor=${encodeURIComponent(page.nextCursor)}` : undefined;
        if (!page.nextCursor) {
          record({ kind: 'rows', client: 'walker', ids });
          if (through) walkerThrough = through;
        }
      }
      await sleep(1000);
    }
  })(),
);
// Streams: all events, and the events of one kind, reconnecting with their last id.
const STREAM_KIND = 'killmail.created';
for (const [name, query] of [['stream-all', ''], ['stream-kind', `&kind=${STREAM_KIND}`]] as const) {
  clients.push(
    (async () => {
      let last: string | undefined;
      for (let i = 0; !stopping; i += 1) {
        const sent = now();
        try {
          const stream = await openSse(`${base(i % 2)}/v1/events/stream?cycles=all&since_indexed=${startedThrough}${query}`, last ? { 'Last-Event-ID': last } : {});
          if (stream.status !== 200) {
            record({ kind: 'answer', client: name, path: '/v1/events/stream', status: stream.status, retryAfter: stream.headers.get('retry-after') ?? undefined, gateway: i % 2, sent });
            stream.close();
            await sleep(1000);
            continue;
          }
          while (!stopping && !(await Promise.race([stream.ended.then(() => true), sleep(500, false)]))) {
            // Rows are taken when the connection ends.
          }
          stream.close();
          record({ kind: 'rows', client: name, ids: stream.rows().map((r) => String(r.id)) });
          last = stream.lastId() ?? last;
        } catch (error) {
          record({ kind: 'answer', client: name, path: '/v1/events/stream', status: 0, error: String((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message), gateway: i % 2, sent });
          await sleep(1000);
        }
      }
    })(),
  );
}
// A stream whose client never reads: the gateway must cut it, not hold its bytes.
clients.push(
  (async () => {
    // Straight to the gateway: a proxy would take the bytes its client does not.
    const req = request(`${direct(1)}/v1/events/stream?cycles=all&since_indexed=${startedThrough}`, { agent: agentFor('127.0.0.6') });
    req.on('response', (res) => res.pause());
    req.on('error', () => {});
    req.end();
    while (!stopping) await sleep(500);
    req.destroy();
  })(),
);

// RSS of every gateway worker and of the follower (0: the process is gone).
const rss = (pid: number) => rssMb(pid).catch(() => 0);
/** Every process of the run as last seen running, by `<name> <pid>` (a node by its name), and when: one gone since is recorded. */
let lastSeen = new Map<string, { process: string; pid?: number; at: number }>();
const sampler = (async () => {
  while (!stopping) {
    const seen = new Map<string, { process: string; pid?: number; at: number }>();
    const running = (process: string, pid?: number) => seen.set(pid === undefined ? process : `${process} ${pid}`, { process, pid, at: now() });
    const sample = async (process: string, pid: number) => {
      const mb = Math.round(await rss(pid));
      // A process gone between listing and reading has no sample.
      if (mb > 0) record({ kind: 'rss', process, pid, mb });
    };
    for (const [i, gateway] of gateways.entries()) {
      if (!gateway || !(await rss(gateway.pid))) continue;
      running(`gateway-${i}`, gateway.pid);
      for (const pid of await childPids(gateway.pid)) {
        running(`gateway-${i} worker`, pid);
        await sample(`gateway-${i} worker`, pid);
      }
    }
    if (follower?.pid && follower.exitCode === null && follower.signalCode === null) {
      running('follower', follower.pid);
      await sample('follower', follower.pid);
    }
    for (const node of cluster.nodes) if (node.alive) running(node.name);
    if (stopping) break;
    for (const [key, { process, pid, at }] of lastSeen) if (!seen.has(key)) record({ kind: 'gone', process, pid, seen: at });
    lastSeen = seen;
    await sleep(10_000);
  }
})();

// --- publications and the nemesis ------------------------------------------------------------
const runMs = minutes * 60_000;
// About six publications in a short run; in a long one, one a minute (as the registry exports).
const publicationEvery = Math.min(60_000, Math.max(20_000, runMs / 6));
const publisher = (async () => {
  for (let k = 1; !stopping && now() < runMs; k += 1) {
    await sleep(publicationEvery);
    if (stopping) return;
    await publishNext(k);
    if (k === 2) {
      await waitLive(publications.at(-1)!.bundleId).catch(() => {});
      const from = live?.bundleId ?? '?';
      const exit = await loaderExit(spawnLoader(['--rollback'], env));
      const to = (await readLive())?.doc.bundleId ?? '?';
      record({ kind: 'rollback', from, to, exit });
      log(`rollback from ${from.slice(0, 12)} to ${to.slice(0, 12)}: exit ${String(exit)}`);
    }
  }
})();
async function publishNext(k: number): Promise<void> {
  const from = publications.at(-1)!.dir;
  const to = path.join(work, `export-${k}`);
  const removable = entities.filter((e) => e.entityType === 'item' && e.id !== detailEntity.id);
  await writeNextExport(from, to, {
    events: async function* (rows) {
      const all: BundleRow[] = [];
      for await (const row of rows) all.push(row);
      const newest = Date.parse(all[0]!.occurredAt);
      // A quarter of them of the kind one stream follows.
      const ofKind = all.find((r) => r.kind === STREAM_KIND && r.environment === 'stillness') ?? all[0]!;
      for (let i = 40; i > 0; i -= 1) yield { ...(i % 4 === 0 ? ofKind : all[i]!), id: `${all[i]!.id}:p${k}-${i}`, occurredAt: new Date(newest + i * 1000).toISOString() };
      yield* all;
      yield { ...all.at(-1)!, id: `${all.at(-1)!.id}:p${k}-late`, occurredAt: new Date(Date.parse(all.at(-1)!.occurredAt) - 3_600_000).toISOString() };
    },
    killmails: async function* (rows) {
      const all: BundleRow[] = [];
      for await (const row of rows) all.push(row);
      for (let i = 3; i > 0; i -= 1) yield { ...all[i]!, id: `${all[i]!.id}:p${k}-${i}`, occurredAt: new Date(Date.parse(all[0]!.occurredAt) + i * 1000).toISOString() };
      yield* all;
    },
    entities: async function* (rows) {
      for await (const row of rows) {
        if (row.id === removable[k]?.id) continue;
        yield row.id === removable[k + 20]?.id ? { ...row, displayName: `${String(row.displayName ?? row.id)} (${k})` } : row;
      }
    },
  });
  await publish(to);
}

const FAULTS = [
  'es-kill',
  'es-kill-master',
  'worker-kill',
  'gateway-term',
  'redis-stop',
  'store-stall',
  'follower-kill',
  'partition-node',
  'partition-master',
  'node-loss',
  'gateway-cut',
  'store-slow',
] as const;
/** A fault this machine cannot make: recorded as skipped, never as made. */
class Skipped extends Error {}
/** A fault, recorded with its span once its process is back; one whose process did not come back is recorded as failed. */
async function fault(kind: (typeof FAULTS)[number]): Promise<void> {
  const at = now();
  let target = '?';
  try {
    await inflict(kind, (name) => (target = name));
    record({ kind: 'fault', fault: kind, target, at, until: now() });
  } catch (error) {
    if (error instanceof Skipped) return void record({ kind: 'skipped', fault: kind, why: error.message });
    record({ kind: 'fault', fault: kind, target, at, failed: (error as Error).message });
    throw error;
  }
}
/** Holds a bad link between the nodes for 10–20 s, then heals it and waits for every node to be back in the cluster. */
async function badLink(made: NetFault): Promise<void> {
  if (!made.made) throw new Skipped(made.why);
  await sleep(10_000 + random.next() * 10_000);
  made.heal();
  await cluster.rejoined();
}

/** Makes the fault and ends it, naming its target (`aim`) before anything can fail. */
async function inflict(kind: (typeof FAULTS)[number], aim: (target: string) => void): Promise<void> {
  switch (kind) {
    case 'es-kill':
    case 'es-kill-master': {
      const node = kind === 'es-kill-master' ? await cluster.electedMaster() : cluster.nodes[Math.floor(random.next() * cluster.nodes.length)]!;
      aim(node.name);
      await cluster.kill(node);
      await sleep(3000 + random.next() * 7000);
      return cluster.restart(node);
    }
    case 'worker-kill': {
      const i = Math.floor(random.next() * 2);
      const workers = gateways[i] ? await childPids(gateways[i]!.pid) : [];
      const pid = workers[Math.floor(random.next() * workers.length)];
      aim(`gateway-${i} worker ${pid}`);
      if (pid) process.kill(pid, 'SIGKILL');
      return void (await sleep(2000));
    }
    case 'gateway-term': {
      const i = Math.floor(random.next() * 2);
      aim(`gateway-${i}`);
      await gateways[i]?.stop();
      await sleep(1000 + random.next() * 2000);
      return startGateway(i);
    }
    case 'redis-stop': {
      const pid = redis.pid();
      aim('redis');
      if (pid) process.kill(pid, 'SIGSTOP');
      await sleep(5000 + random.next() * 15_000);
      if (pid) process.kill(pid, 'SIGCONT');
      return;
    }
    case 'store-stall': {
      aim('moto');
      process.kill(moto.pid, 'SIGSTOP');
      await sleep(STORE_TIMEOUT_MS + 2000);
      process.kill(moto.pid, 'SIGCONT');
      return;
    }
    case 'follower-kill': {
      aim('follower');
      follower?.kill('SIGKILL');
      await sleep(1000 + random.next() * 2000);
      return startFollower();
    }
    case 'partition-node':
    case 'partition-master': {
      const node = kind === 'partition-master' ? await cluster.electedMaster() : cluster.nodes[Math.floor(random.next() * cluster.nodes.length)]!;
      aim(node.name);
      return badLink(net.partition([node]));
    }
    case 'node-loss': {
      const node = cluster.nodes[Math.floor(random.next() * cluster.nodes.length)]!;
      aim(node.name);
      return badLink(net.loss(node, 0.3));
    }
    case 'gateway-cut': {
      const i = Math.floor(random.next() * 2);
      aim(`gateway-${i}`);
      esLinks[i]!.set({ kind: 'blackhole' });
      await sleep(5000 + random.next() * 5000);
      return esLinks[i]!.set({ kind: 'pass' });
    }
    case 'store-slow': {
      aim('store link');
      storeLink.set({ kind: 'slow', delayMs: STORE_TIMEOUT_MS + 1000 });
      await sleep(2 * STORE_TIMEOUT_MS + 2000);
      return storeLink.set({ kind: 'pass' });
    }
  }
}
const nemesis = (async () => {
  // Every kind once in a seeded order, then seeded picks, until the time is up.
  const order = [...FAULTS].sort(() => random.next() - 0.5);
  if (faultless) return void (await sleep(runMs));
  for (let n = 0; !stopping && now() < runMs; n += 1) {
    await sleep(2000 + random.next() * 6000);
    const kind = n < order.length ? order[n]! : FAULTS[Math.floor(random.next() * FAULTS.length)]!;
    log(`nemesis: ${kind}`);
    await fault(kind).catch((error) => log(`nemesis: ${kind} failed: ${(error as Error).message}`));
  }
})();

// --- the end ----------------------------------------------------------------------------------
/** When the run's defect was planted (s into the run), if it was: a gateway's settings are from the start. */
function plantedAt(): number | undefined {
  if (!sabotage) return undefined;
  if (plant) return plant.plantedAt() === undefined ? undefined : Math.round((plant.plantedAt()! - started) / 100) / 10;
  if (sabotage === 'row-short') return rowDeleted === undefined ? undefined : 0;
  return 0;
}
let exitCode = 0;
try {
  await Promise.all([nemesis, publisher]);
  await publishNext(publications.length);
  await waitLive(publications.at(-1)!.bundleId);
  // Let the walker and the streams take in the last generation.
  for (const deadline = Date.now() + 30_000; Date.now() < deadline && walkerThrough < live!.indexedAt!; ) await sleep(500);
  await sleep(5000);
  stopping = true;
  await Promise.race([Promise.all([...clients, watcher, sampler]), sleep(40_000)]);

  // Expected, from the bundle files of every publication.
  const counts = new Map(publications.map((p) => [p.bundleId, p.counts]));
  const newEvents: Expected['newEvents'] = new Map();
  for (const [k, { dir }] of publications.entries()) {
    if (k > 0) for await (const { row } of readRows(dir, 'events.jsonl')) if (row.environment === 'stillness' && !newEvents.has(String(row.id)) && !firstEvents.has(String(row.id))) newEvents.set(String(row.id), { publication: k, kind: String(row.kind) });
  }
  const gateways = gatewaySide(await Promise.all([0, 1].map((i) => readFile(gatewayLog(i), 'utf8').catch(() => ''))).then((logs) => logs.flatMap((log) => log.split('\n'))));
  const expected: Expected = { counts, lastBundle: publications.at(-1)!.bundleId, newEvents, kinds: { 'stream-kind': STREAM_KIND }, budget: { client: 'greedy', ...BUDGET }, gateways };
  // The history first: a checker that fails or is slow never costs the run's record.
  const file = path.join(records, `${seed}.json`);
  await writeFile(file, JSON.stringify({ seed, minutes, scale, history }, null, 1));
  log(`history (${history.length} entries) in ${file}; checking`);
  const violations = check(history, expected);
  const answers = history.filter((e) => e.kind === 'answer');
  const faults = history.filter((e) => e.kind === 'fault');
  const summary = {
    seed,
    minutes,
    faults: Object.fromEntries(FAULTS.map((f) => [f, faults.filter((e) => (e as { fault: string }).fault === f).length])),
    skipped: history.filter((e) => e.kind === 'skipped').map((e) => (e as { fault: string }).fault),
    publications: publications.length,
    requests: answers.length,
    byStatus: answers.reduce<Record<string, number>>((m, e) => ((m[String((e as { status: number }).status)] = (m[String((e as { status: number }).status)] ?? 0) + 1), m), {}),
    rowsDelivered: history.filter((e) => e.kind === 'rows').reduce((n, e) => n + (e as { ids: string[] }).ids.length, 0),
    // Publication → live, seconds, per publication (a rolled-back one is not taken in again: null).
    lagSeconds: publications.map(({ bundleId }) => {
      const published = history.find((e) => e.kind === 'publication' && e.bundleId === bundleId)!.at;
      const went = history.find((e) => e.kind === 'live' && e.bundleId === bundleId && e.at >= published);
      return went ? Math.round((went.at - published) / 100) / 10 : null;
    }),
    ...(sabotage && { sabotage: { kind: sabotage, planted: plantedAt(), caughtAs: CAUGHT_AS[sabotage] } }),
    violations,
    history: file,
    gatewayLogs: [0, 1].map(gatewayLog),
    followerLog: followerLog.path,
  };
  console.log(JSON.stringify(summary, null, 2));
  if (violations.length) {
    exitCode = 1;
    // Each invariant once, with how often it broke and its first cases (all of them are in the summary above).
    const byInvariant = Map.groupBy(violations, (v) => v.invariant);
    for (const [invariant, cases] of byInvariant) {
      log(`BROKEN: ${invariant}${cases.length > 1 ? ` (${cases.length} times)` : ''}`);
      for (const v of cases.slice(0, 3)) log(`  ${v.detail}${v.after ? ` (after ${v.after})` : ''}`);
    }
  }
  if (sabotage) {
    const caught = plantedAt() !== undefined && violations.some((v) => v.invariant === CAUGHT_AS[sabotage]);
    log(caught ? `sabotage ${sabotage}: caught, as "${CAUGHT_AS[sabotage]}"` : `sabotage ${sabotage}: NOT caught (${plantedAt() === undefined ? 'never planted' : `no "${CAUGHT_AS[sabotage]}"`})`);
    if (!caught) exitCode = 3;
  }
} catch (error) {
  exitCode = 1;
  log(`the rehearsal failed: ${(error as Error).stack ?? String(error)}`);
} finally {
  stopping = true;
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  await rm(work, { recursive: true, force: true });
  log(`done (seed ${seed}): exit ${exitCode}`);
  process.exit(exitCode);
}
