/**
 * Every core, every machine: the gateway as `WORKERS=4` processes on one port, and two gateways
 * sharing a Redis server (RATE_LIMIT_STORE). A client has one budget whichever worker or gateway
 * serves it; /metrics is the sum over workers; a worker that dies is replaced, workers that keep
 * dying stop the gateway with a non-zero exit, and no connection is lost to one that dies before
 * taking it; SIGTERM lets the request in flight finish. Clients are distinct loopback addresses
 * on fresh connections.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readAllRows } from '../../generator/read-bundle.ts';
import { type GatewayProcess, spawnGatewayProcess } from '../../harness/gateway-process.ts';
import { childPids, pidsServing } from '../../harness/proc.ts';
import { type RedisServer, redisServerInstalled, startRedisServer } from '../../harness/redis-server.ts';
import { loadConfig } from '../../src/config.ts';
import { COSTS } from '../../src/limits/request-cost.ts';
import { type RunningServer, startServer } from '../../src/server.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { stopsWithDownloadInFlight } from '../support/gateway-stop.ts';
import { getFrom, holdFrom } from '../support/loopback-client.ts';
import { type TcpProxy, startTcpProxy } from '../support/tcp-proxy.ts';

// 20 points per 20 s window: every request of a case falls in one window.
const RATE_LIMIT = '1/20';
const BUDGET = 20;
const WORKERS = 4;
const STREAMS_PER_CLIENT = 2;

let gw: TestGateway;
let proxy: TcpProxy;
let entity: string;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  proxy = await startTcpProxy(inject('esUrl'));
  gw = await startTestGateway({ name: 'workers', scale: 1, seed: 83 });
  entity = encodeURIComponent(String((await readAllRows(gw.bundleDir, 'entities.jsonl'))[0]!.id));
}, 300_000);

afterAll(async () => {
  await gw?.close();
  await proxy?.close();
});

const spawnWorkers = (env: Record<string, string> = {}) =>
  spawnGatewayProcess('src/server.ts', { ES_URL: proxy.url, INDEX_PREFIX: gw.prefix, DATA_DIR: gw.config.dataDir, WORKERS: String(WORKERS), RATE_LIMIT, LOG_LEVEL: 'warn', ...env });

/** `count` GETs of `path` from `from`, each on a new connection; the statuses in order. */
async function statuses(from: string, urls: string[]): Promise<number[]> {
  const out: number[] = [];
  for (const url of urls) out.push((await getFrom(from, url)).status);
  return out;
}
const tally = (list: number[], status: number) => list.filter((s) => s === status).length;

/** The value of every unlabelled `<prefix>_<key> <n>` line, as the registry's explorer reads them. */
function unlabelled(text: string): Record<string, number> {
  return Object.fromEntries([...text.matchAll(/^blackrelay_api_([a-z_]+)\s+(\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
}

describe('WORKERS=4', () => {
  let gateway: GatewayProcess;
  let url: string;

  beforeAll(async () => {
    gateway = spawnWorkers({ STREAMS_PER_CLIENT: String(STREAMS_PER_CLIENT) });
    url = await gateway.listening;
  }, 120_000);

  afterAll(async () => {
    gateway?.child.kill('SIGKILL');
  });

  it('runs one primary and four workers, and says so', async () => {
    expect(gateway.stdout()).toContain(`(${WORKERS} workers)`);
    expect(await childPids(gateway.child.pid!)).toHaveLength(WORKERS);
  });

  it('gives a client one budget across the workers: N allowed requests, not 4N', async () => {
    const list = Array.from({ length: 30 }, () => `${url}/v1/entities?limit=1`);
    const answered = await statuses('127.0.0.2', list);
    expect(tally(answered, 200)).toBe(Math.floor(BUDGET / COSTS.list));
    expect(tally(answered, 429)).toBe(list.length - Math.floor(BUDGET / COSTS.list));
  });

  it("caps a client's open streams across the workers: STREAMS_PER_CLIENT in all, not 4 times that, given back as they close", async () => {
    const from = '127.0.0.7';
    const open = async () => holdFrom(from, `${url}/v1/killmails/stream`);
    // Fresh connections land on whichever worker accepts first: the cap is the gateway's.
    const first = [];
    for (let i = 0; i < WORKERS; i += 1) first.push(await open());
    const allowed = Array.from({ length: WORKERS }, (_, i) => (i < STREAMS_PER_CLIENT ? 200 : 429));
    expect(first.map((s) => s.status)).toEqual(allowed);
    for (const stream of first) stream.close();
    // The primary hears of each close: the client may open as many again (each stream costs
    // points too, within the budget here).
    await sleep(500);
    const again = [];
    for (let i = 0; i < STREAMS_PER_CLIENT; i += 1) again.push(await open());
    expect(again.map((s) => s.status)).toEqual(allowed.slice(0, STREAMS_PER_CLIENT));
    for (const stream of again) stream.close();
  });

  it('forgets the streams of a worker that dies: its client may open them again', async () => {
    const from = '127.0.0.8';
    const open = async () => holdFrom(from, `${url}/v1/killmails/stream`);
    const held = [];
    for (let i = 0; i < STREAMS_PER_CLIENT; i += 1) held.push(await open());
    expect(held.map((s) => s.status)).toEqual(Array(STREAMS_PER_CLIENT).fill(200));
    expect((await open()).status).toBe(429);
    // The worker serving one of them dies without a word to the primary.
    const [serving] = await pidsServing(await childPids(gateway.child.pid!), from);
    expect(serving).toBeDefined();
    process.kill(serving!, 'SIGKILL');
    await sleep(500);
    const reopened = await open();
    expect(reopened.status).toBe(200);
    for (const stream of [...held, reopened]) stream.close();
  });

  it('answers /metrics for the whole gateway: request counters summed over workers, row counts as one process reads them', async () => {
    const sent = 12;
    const answered = await statuses('127.0.0.3', Array.from({ length: sent }, () => `${url}/v1/entities/${entity}`));
    expect(answered).toEqual(Array(sent).fill(200));
    const text = (await getFrom('127.0.0.1', `${url}/metrics`)).body as string;
    const counted = /^blackrelay_api_http_request_duration_seconds_count\{route="\/v1\/entities\/:idOrSlug",method="GET",status="200"\} (\d+)$/m.exec(text);
    expect(Number(counted?.[1])).toBe(sent);
    // The explorer's badges: each count once (not four times), on the very first scrape of a worker.
    const single = unlabelled((await gw.get('/metrics')).text);
    const summed = unlabelled(text);
    for (const key of ['entities', 'events', 'killmails', 'sources', 'build_info']) expect(summed[key], key).toBe(single[key]);
  });

  it('replaces a worker that dies', async () => {
    const before = await childPids(gateway.child.pid!);
    process.kill(before[0]!, 'SIGKILL');
    let after: number[] = [];
    for (let i = 0; i < 100 && (after.length < WORKERS || after.includes(before[0]!)); i += 1) {
      await sleep(100);
      after = await childPids(gateway.child.pid!);
    }
    expect(after).toHaveLength(WORKERS);
    expect(after).not.toContain(before[0]);
    expect(gateway.child.exitCode).toBeNull();
    const answered = await statuses('127.0.0.4', Array.from({ length: 8 }, () => `${url}/v1/health`));
    expect(answered).toEqual(Array(8).fill(200));
  });
  it('loses no connection to a worker that dies before taking it: each is answered by another', async () => {
    // A stopped worker takes nothing; with node:cluster's round-robin the primary would still
    // hand it one connection, lost unanswered (and never closed) when the worker is killed.
    const [victim] = await childPids(gateway.child.pid!);
    process.kill(victim!, 'SIGSTOP');
    const sent = 8;
    const answers = Array.from({ length: sent }, () =>
      getFrom('127.0.0.9', `${url}/v1/health`).then(
        (answer) => answer.status,
        (error: NodeJS.ErrnoException) => error.code,
      ),
    );
    await sleep(300);
    process.kill(victim!, 'SIGKILL');
    const settled = await Promise.race([Promise.all(answers), sleep(10_000).then(() => 'some connection was never answered')]);
    expect(settled).toEqual(Array(sent).fill(200));
  });
});

describe('WORKERS: stopping', () => {
  it('SIGTERM: every worker stops accepting and finishes the request in flight, then the primary exits 0', async () => {
    const gateway = spawnWorkers({ SHUTDOWN_TIMEOUT_MS: '60000', LOG_LEVEL: 'info' });
    try {
      await stopsWithDownloadInFlight(gateway, proxy, gw.bundleDir);
    } finally {
      proxy.release();
      gateway.child.kill('SIGKILL');
    }
  });

  it('exits non-zero when the workers keep dying (a supervisor sees it)', async () => {
    const gateway = spawnWorkers({ WORKERS: '2' });
    try {
      await gateway.listening;
      // Kill whatever workers there are until the primary gives up (bounded: 20 s).
      for (let i = 0; i < 200 && gateway.child.exitCode === null; i += 1) {
        for (const pid of await childPids(gateway.child.pid!)) process.kill(pid, 'SIGKILL');
        await sleep(100);
      }
      expect(await gateway.exited).toBe(1);
      expect(gateway.stderr()).toContain('crash-looping');
    } finally {
      gateway.child.kill('SIGKILL');
    }
  });
});

const hasRedis = redisServerInstalled();
if (!hasRedis && process.env.CI) throw new Error('redis-server is missing: .ci/run installs it');
if (!hasRedis) console.warn('workers.test.ts: skipping the shared budget across gateways: /usr/bin/redis-server is not installed (apt-get install redis-server)');

describe.skipIf(!hasRedis)('RATE_LIMIT_STORE: one budget across gateways', () => {
  let redis: RedisServer;
  let a: RunningServer;
  let b: RunningServer;

  beforeAll(async () => {
    redis = await startRedisServer();
    const config = loadConfig({ INDEX_PREFIX: gw.prefix, DATA_DIR: gw.config.dataDir, PORT: '0', LOG_LEVEL: 'silent', RATE_LIMIT, RATE_LIMIT_STORE: redis.url });
    a = await startServer(config, inject('esUrl'));
    b = await startServer(config, inject('esUrl'));
  }, 60_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.stop();
  });

  const alternating = (n: number) => Array.from({ length: n }, (_, i) => `${i % 2 ? b.url : a.url}/v1/entities?limit=1`);

  it('a client allowed N requests gets N in all from two gateways, not 2N', async () => {
    const answered = await statuses('127.0.0.5', alternating(30));
    expect(tally(answered, 200)).toBe(Math.floor(BUDGET / COSTS.list));
    expect(tally(answered, 429)).toBe(30 - Math.floor(BUDGET / COSTS.list));
  });

  it('with the store stopped, requests keep being answered and are limited by each gateway', async () => {
    await redis.stop();
    const answered = await statuses('127.0.0.6', alternating(40));
    // No request fails for the outage; each gateway now keeps its own budget.
    expect(answered.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(tally(answered, 200)).toBe(2 * Math.floor(BUDGET / COSTS.list));
  });
});
