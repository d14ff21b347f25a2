/**
 * Overload benchmark (`npm run bench -- overload`): the gateway as users run it (default
 * settings, request log on) on the 1.5 M-row bundle, clients on distinct loopback addresses.
 *
 * 1. Capacity: the expensive mix (searches rotating one-typo names, and `group_by` facets when
 *    the routes have them) through a gateway with no limits, closed loop at 1, 2, 4 … 32
 *    connections, two interleaved rounds averaged. Capacity = the best rate; the admission cap the data argues for = the fewest
 *    connections reaching 95 % of it (reported beside the configured default). Unloaded = the
 *    mix at one connection.
 * 2. A polite client alone: 20 req/s of `/v1/entities?limit=20` from 127.0.0.2.
 * 3. One greedy client: the polite one again, beside a greedy client on 127.0.0.3 sending the
 *    mix open loop at 4× capacity over keep-alive connections; then beside one on 127.0.0.4
 *    opening a new connection for every request (up to 64 at once), as a careless script does,
 *    with the connection cap (`MAX_CONNECTIONS_PER_CLIENT`) and without it.
 * 4. A crowd: enough clients, each within its own budget, to offer 4× capacity together
 *    (127.0.0.10 …), each a Poisson process, who keep sending whatever the answers: goodput,
 *    admitted p99, refusals, timeouts, the gateway's RSS, and the cores the gateway and the load
 *    generator kept busy.
 * 5. 3 and 4 again with `RATE_LIMIT=off` and `ES_MAX_IN_FLIGHT=off`: what the limits buy; and the
 *    crowd once more with the defaults, its clients waiting out each `Retry-After`.
 * 6. The request log's cost: `/v1/health` and `/v1/entities` with `LOG_LEVEL=info` and `warn`,
 *    interleaved.
 *
 * Reported against the issue's goals, each as a ratio to a figure measured in the same run, beside
 * the bound of the same run: the sweep's closed loop at the configured slots, which no admission
 * policy can beat, and the cores the load generator takes from the cores it shares.
 */
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { readAllRows } from '../generator/read-bundle.ts';
import { ensureBundle } from '../generator/write-bundle.ts';
import { loadBundle } from '../loader/load-bundle.ts';
import { spawnGateway } from '../harness/gateway-process.ts';
import { type Listener, spawnListener } from '../harness/listener.ts';
import { cpuSeconds, rssMb } from '../harness/proc.ts';
import { type Config, DEFAULT_ES_MAX_IN_FLIGHT, DEFAULT_ES_QUEUE, DEFAULT_MAX_CONNECTIONS_PER_CLIENT, DEFAULT_RATE_LIMIT, PROJECT_ROOT } from '../src/config.ts';
import { ApiError } from '../src/errors.ts';
import { createMeta, toErrorBody } from '../src/http/envelope.ts';
import { type ClientFigures, type ClientPlan, type OpenLoopResult, runOpenLoop } from './open-loop.ts';
import { type LoadFigures, type Log, drive, mean, mergesSettled, round, typo } from './support.ts';

const PREFIX = 'bench-overload';
const POLITE_RATE = 20;
const POLITE_PATH = '/v1/entities?limit=20';
/**
 * What one crowd client sends per second: its mix costs ~3.5 points a request, 28 points/s
 * against the default 50. Its arrivals are Poisson, so the margin is what keeps a client within
 * its budget in its bursts too (100 points in 2 s is 29 requests where it sends 16 on average:
 * about 1 window in 300).
 */
const CROWD_CLIENT_RATE = 8;
const SWEEP = [1, 2, 4, 8, 16, 32];

export interface SweepStep {
  connections: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Cores the load generator (autocannon, in this process) kept busy. */
  clientCores: number;
  /** Cores Elasticsearch kept busy (undefined when it runs on another machine). */
  esCores?: number;
}

export interface ScenarioFigures {
  settings: string;
  seconds: number;
  clients: ClientFigures[];
  /** Every 200 answer, all clients together. */
  ok: OpenLoopResult['ok'];
  /** 200s per second over the capacity. */
  goodputOfCapacity: number;
  gatewayRssMb: { start: number; max: number; end: number };
  /** Cores kept busy by the gateway and by the load generator (this process) during the scenario. */
  cores: { gateway: number; clients: number; elasticsearch?: number };
}

export interface OverloadBenchResult {
  bundle: { scale: number; rows: number };
  seconds: number;
  mix: string[];
  groupBy: boolean;
  capacity: { requestsPerSecond: number; sweep: SweepStep[]; kneeConnections: number; configuredMaxInFlight: number; configuredQueue: number };
  /**
   * What no admission policy can beat, from the same run: a closed loop of N connections is
   * admission control with N slots whose queue is never empty and whose refusals cost nothing.
   * `atSlots`: the sweep's step at the configured ES_MAX_IN_FLIGHT, as a share of capacity and
   * its p99 over the unloaded p99. `clientCores`: the cores the load generator took at capacity
   * and in the crowd, which the crowd's goodput pays for on these shared cores.
   */
  bound?: {
    atSlots: { connections: number; ofCapacity: number; p99OverUnloaded: number } | undefined;
    clientCores: { capacity: number; crowd: number };
    /** The crowd's goodput (defaults) over the bound's. */
    crowdOfBound: number | undefined;
    /** Cores Elasticsearch kept busy at the bound and in the crowd (defaults), when it runs here. */
    esCores?: { atSlots: number; crowd: number; crowdOfBound: number };
    /**
     * The same closed loop at the configured slots while the crowd is answered beside it by a
     * bare server that refuses every request at once (bench/fixed-answer.ts): the bound once the
     * crowd's refusals are answered, and the crowd generated, on the cores Elasticsearch shares
     * — which the closed loop alone leaves out. The crowd's goodput and admitted p99 over its own.
     */
    besideRefusals: { requestsPerSecond: number; p50Ms: number; p99Ms: number; cores: { gateway: number; clients: number; elasticsearch?: number }; crowdOfIt: number; admittedP99OverIt: number };
  };
  unloaded: LoadFigures;
  politeAlone: ClientFigures;
  greedy: {
    limited: ScenarioFigures;
    unlimited: ScenarioFigures;
    /** The greedy client opening a new connection per request, defaults. */
    fresh: ScenarioFigures;
    /** The same, defaults but `MAX_CONNECTIONS_PER_CLIENT=off`: what the connection cap buys. */
    freshUncapped: ScenarioFigures;
    /**
     * The bound of any cap: the polite client on the gateway (defaults) while the same greedy
     * client's connections go to a bare server that resets each when accepted (bench/fixed-answer.ts):
     * what generating that client and refusing it at once, on these shared cores, still costs the polite one.
     */
    freshBesideResets: ScenarioFigures;
    politeP99OverAlone: { limited: number; unlimited: number; fresh: number; freshUncapped: number; freshBesideResets: number };
    politeP50OverAlone: { limited: number; fresh: number; freshUncapped: number; freshBesideResets: number };
  };
  /**
   * `honoring`: the same crowd with the defaults, its clients waiting out each `Retry-After` (the
   * answer's purpose). `fifo`: the defaults but `ES_QUEUE_ORDER=fifo`, what the adaptive order buys
   * (since only a client's requests past its share wait, it orders only those: in practice the
   * same code as the defaults, so the two rows also show how far one 20 s run of it moves).
   */
  crowd?: { limited: ScenarioFigures; unlimited: ScenarioFigures; honoring: ScenarioFigures; fifo: ScenarioFigures; admittedP99OverUnloaded: { limited: number; unlimited: number; honoring: number; fifo: number } };
  requestLog?: { health: { on: number; off: number; cost: number }; entities: { on: number; off: number; cost: number } };
}

/** `greedy`: the capacity sweep, the polite client alone and beside the greedy ones, nothing after (no crowd, bound or request log). */
export type OverloadPart = 'greedy';

/** CPU seconds of Elasticsearch's nodes on this machine; undefined when a node runs elsewhere. */
async function esCpuSeconds(pids: number[]): Promise<number | undefined> {
  try {
    return (await Promise.all(pids.map(cpuSeconds))).reduce((sum, s) => sum + s, 0);
  } catch {
    return undefined;
  }
}

/**
 * Samples the gateway's RSS every second while `work` runs, and the cores the gateway, this
 * process (the load generator) and Elasticsearch (`esPids`, when on this machine) kept busy: on
 * a machine whose cores Elasticsearch shares, what the others use is what it cannot.
 */
async function measured<T>(
  pid: number,
  esPids: number[],
  work: () => Promise<T>,
): Promise<{ result: T; rss: { start: number; max: number; end: number }; cores: { gateway: number; clients: number; elasticsearch?: number } }> {
  const start = Math.round(await rssMb(pid));
  let max = start;
  const sampler = setInterval(() => void rssMb(pid).then((mb) => (max = Math.max(max, Math.round(mb))), () => {}), 1000);
  const gatewayCpu = await cpuSeconds(pid);
  const esCpu = await esCpuSeconds(esPids);
  const clientsCpu = process.cpuUsage();
  const started = performance.now();
  try {
    const result = await work();
    const seconds = (performance.now() - started) / 1000;
    const end = Math.round(await rssMb(pid));
    const clients = process.cpuUsage(clientsCpu);
    const esCpuEnd = await esCpuSeconds(esPids);
    return {
      result,
      rss: { start, max: Math.max(max, end), end },
      cores: {
        gateway: round(((await cpuSeconds(pid)) - gatewayCpu) / seconds),
        clients: round((clients.user + clients.system) / 1e6 / seconds),
        ...(esCpu !== undefined && esCpuEnd !== undefined && { elasticsearch: round((esCpuEnd - esCpu) / seconds) }),
      },
    };
  } finally {
    clearInterval(sampler);
  }
}

const addresses = (from: number, count: number) => Array.from({ length: count }, (_, i) => `127.0.${Math.floor((from + i) / 250)}.${((from + i) % 250) + 2}`);

/**
 * Gateway settings: as users run them, or with both limits off. The response cache is off in
 * both: the mix repeats its 200 searches, which a cache would answer from memory after one pass
 * — this benchmark is about what reaches Elasticsearch.
 */
function settings(limited: boolean): Record<string, string> {
  const defaults = {
    RATE_LIMIT: DEFAULT_RATE_LIMIT,
    ES_MAX_IN_FLIGHT: String(DEFAULT_ES_MAX_IN_FLIGHT),
    ES_QUEUE: String(DEFAULT_ES_QUEUE),
    MAX_CONNECTIONS_PER_CLIENT: String(DEFAULT_MAX_CONNECTIONS_PER_CLIENT),
    LOG_LEVEL: 'info',
    RESPONSE_CACHE: 'off',
  };
  return limited ? defaults : { RATE_LIMIT: 'off', ES_MAX_IN_FLIGHT: 'off', MAX_CONNECTIONS_PER_CLIENT: 'off', LOG_LEVEL: 'info', RESPONSE_CACHE: 'off' };
}

export async function benchOverload(options: { client: Client; esUrl: string; config: Readonly<Config>; scale: number; seconds: number; only?: OverloadPart; log: Log }): Promise<OverloadBenchResult> {
  const { client, esUrl, config, scale, seconds, only, log } = options;
  const dir = await ensureBundle(path.join(config.cacheDir, `bench-bundle-scale-${scale}`), { scale }, log);
  log(`overload: loading scale ${scale} under ${PREFIX} (a no-op when it is live)`);
  const loaded = await loadBundle(dir, { client, prefix: PREFIX, dataDir: path.join(config.cacheDir, 'bench-data'), cycleStarts: config.cycleStarts });
  // A fresh load keeps Elasticsearch merging for a while: a capacity taken then is too low (a run
  // of 2026-11-26 measured 286 req/s and an unloaded p99 of 63 ms, and the crowd later 1.08 of it).
  await mergesSettled(client, log);
  const env = { ES_URL: esUrl, INDEX_PREFIX: PREFIX, DATA_DIR: path.join(config.cacheDir, 'bench-data') };
  // Elasticsearch's processes, for the cores it kept busy (read from /proc when they run here).
  const esPids = Object.values((await client.nodes.info({ metric: 'process' })).nodes).map((node) => Number(node.process?.id));

  const names = (await readAllRows(dir, 'entities.jsonl')).filter((r) => r.environment === 'stillness').map((r) => typo(String(r.name)));
  const searches = [...new Set(names.filter((q): q is string => q !== undefined))].slice(0, 200).map((q) => `/v1/search?q=${encodeURIComponent(q)}&limit=50`);
  const facets = ['/v1/events?group_by=kind', '/v1/killmails?group_by=system', '/v1/entities?group_by=entityType'];

  const open = async (limited: boolean, extra: Record<string, string> = {}) => spawnGateway({ ...env, ...settings(limited), ...extra });
  let gateway: Listener = await open(false);
  let mix: string[];
  let groupBy: boolean;
  let sweep: SweepStep[];
  let unloaded: LoadFigures;
  try {
    groupBy = (await fetch(`${gateway.url}${facets[0]}`)).status === 200;
    // Three searches to one facet, interleaved; searches only where group_by does not exist yet.
    mix = groupBy ? searches.flatMap((s, i) => (i % 3 === 2 ? [s, facets[Math.floor(i / 3) % facets.length]!] : [s])) : searches;
    log(`overload: mix of ${mix.length} paths (group_by ${groupBy ? 'included' : 'not served: searches only'})`);
    await drive({ url: gateway.url, requests: mix.map((p) => ({ path: p })) }, 2, 4);
    unloaded = await drive({ url: gateway.url, requests: mix.map((p) => ({ path: p })) }, seconds / 2, 1);
    // Two interleaved rounds, averaged: these cores are shared, and one round can land on a busy moment.
    const rounds = new Map<number, (LoadFigures & { clientCores: number; esCores: number | undefined })[]>();
    for (let pass = 0; pass < 2; pass += 1) {
      for (const connections of SWEEP) {
        const { result: figures, cores } = await measured(gateway.pid, esPids, () => drive({ url: gateway.url, requests: mix.map((p) => ({ path: p })) }, seconds / 4, connections));
        rounds.set(connections, [...(rounds.get(connections) ?? []), { ...figures, clientCores: cores.clients, esCores: cores.elasticsearch }]);
        log(`  ${connections} connections: ${figures.requestsPerSecond} req/s, p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, non-2xx ${figures.non2xx}`);
      }
    }
    sweep = SWEEP.map((connections) => {
      const runs = rounds.get(connections)!;
      return {
        connections,
        requestsPerSecond: Math.round(mean(runs.map((r) => r.requestsPerSecond))),
        p50Ms: round(mean(runs.map((r) => r.p50Ms)), 1),
        p99Ms: round(mean(runs.map((r) => r.p99Ms)), 1),
        clientCores: round(mean(runs.map((r) => r.clientCores))),
        ...(runs.every((r) => r.esCores !== undefined) && { esCores: round(mean(runs.map((r) => r.esCores!))) }),
      };
    });
  } finally {
    await gateway.stop();
  }
  const capacity = Math.max(...sweep.map((s) => s.requestsPerSecond));
  const knee = sweep.find((s) => s.requestsPerSecond >= 0.95 * capacity)!.connections;
  log(`overload: capacity ${capacity} req/s (95 % of it from ${knee} connections); unloaded p50 ${unloaded.p50Ms} ms, p99 ${unloaded.p99Ms} ms`);

  // The polite client waits out a Retry-After (it should never get one); the others keep sending.
  const polite = { name: 'polite', address: '127.0.0.2', rate: POLITE_RATE, paths: [POLITE_PATH], honorRetryAfter: true, steady: true, ownThread: true };
  const greedyPlan = { name: 'greedy', address: '127.0.0.3', rate: 4 * capacity, paths: mix, maxOutstanding: 512 };
  const freshPlan = { name: 'greedy-fresh', address: '127.0.0.4', rate: 4 * capacity, paths: mix, maxOutstanding: 64, freshConnections: true };
  const crowdSize = Math.ceil((4 * capacity) / CROWD_CLIENT_RATE);
  const crowdPlans = addresses(8, crowdSize).map((address, i) => ({
    name: `crowd-${i + 1}`,
    address,
    rate: CROWD_CLIENT_RATE,
    // Each starts at a different point of the mix.
    paths: [...mix.slice((i * 7) % mix.length), ...mix.slice(0, (i * 7) % mix.length)],
    maxOutstanding: 64,
  }));

  const scenario = async (limited: boolean, plans: ClientPlan[], extra: Record<string, string> = {}): Promise<ScenarioFigures> => {
    gateway = await open(limited, extra);
    try {
      // Warm: JIT, the live-generation cache, connections.
      await drive({ url: gateway.url, requests: mix.map((p) => ({ path: p })) }, 2, 2);
      const { result, rss, cores } = await measured(gateway.pid, esPids, () => runOpenLoop(gateway.url, plans, seconds));
      return {
        settings: [limited ? 'defaults' : 'RATE_LIMIT=off, ES_MAX_IN_FLIGHT=off', ...Object.entries(extra).map(([k, v]) => `${k}=${v}`)].join(', '),
        seconds,
        clients: result.clients,
        ok: result.ok,
        goodputOfCapacity: round(result.ok.count / seconds / capacity),
        gatewayRssMb: rss,
        cores,
      };
    } finally {
      await gateway.stop();
    }
  };

  /** The closed loop at the configured slots (no limits), while the crowd is refused by a bare server. */
  const boundBesideRefusals = async () => {
    gateway = await open(false);
    const refuser = await spawnListener(path.join(PROJECT_ROOT, 'bench', 'fixed-answer.ts'), {
      REFUSE: Buffer.from(JSON.stringify(toErrorBody(ApiError.overloaded(), createMeta(config.registryName)))).toString('base64'),
    });
    try {
      await drive({ url: gateway.url, requests: mix.map((p) => ({ path: p })) }, 2, 2);
      const refuserCpu = await cpuSeconds(refuser.pid);
      const { result, cores } = await measured(gateway.pid, esPids, async () => {
        const [figures] = await Promise.all([drive({ url: gateway.url, requests: mix.map((p) => ({ path: p })) }, seconds, DEFAULT_ES_MAX_IN_FLIGHT), runOpenLoop(refuser.url, crowdPlans, seconds)]);
        return figures;
      });
      // The gateway's cores and the refuser's together: both answer this crowd's requests.
      return { figures: result, cores: { ...cores, gateway: round(cores.gateway + ((await cpuSeconds(refuser.pid)) - refuserCpu) / seconds) } };
    } finally {
      await Promise.all([gateway.stop(), refuser.stop()]);
    }
  };

  /** `plans` on the gateway (defaults) while `reset` send to a bare server that resets every connection when accepted. */
  const besideResets = async (plans: ClientPlan[], reset: ClientPlan[]): Promise<ScenarioFigures> => {
    gateway = await open(true);
    const resetter = await spawnListener(path.join(PROJECT_ROOT, 'bench', 'fixed-answer.ts'), { RESET: '1' });
    try {
      await drive({ url: gateway.url, requests: mix.map((p) => ({ path: p })) }, 2, 2);
      const resetterCpu = await cpuSeconds(resetter.pid);
      const { result, rss, cores } = await measured(gateway.pid, esPids, () => Promise.all([runOpenLoop(gateway.url, plans, seconds), runOpenLoop(resetter.url, reset, seconds)]));
      const clients = [...result[0].clients, ...result[1].clients];
      return {
        settings: 'defaults; the greedy client on a bare server resetting every connection',
        seconds,
        clients,
        ok: result[0].ok,
        goodputOfCapacity: round(result[0].ok.count / seconds / capacity),
        gatewayRssMb: rss,
        // The gateway's cores and the resetter's together: both answer these clients.
        cores: { ...cores, gateway: round(cores.gateway + ((await cpuSeconds(resetter.pid)) - resetterCpu) / seconds) },
      };
    } finally {
      await Promise.all([gateway.stop(), resetter.stop()]);
    }
  };

  log('overload: polite client alone');
  const alone = (await scenario(true, [polite])).clients[0]!;
  log(`  polite alone: p50 ${alone.ok.p50} ms, p99 ${alone.ok.p99} ms, ${JSON.stringify(alone.byStatus)}`);
  const greedy = {
    limited: await scenario(true, [polite, greedyPlan]),
    unlimited: await scenario(false, [polite, greedyPlan]),
    fresh: await scenario(true, [polite, freshPlan]),
    freshUncapped: await scenario(true, [polite, freshPlan], { MAX_CONNECTIONS_PER_CLIENT: 'off' }),
    freshBesideResets: await besideResets([polite], [freshPlan]),
  };
  for (const [name, s] of Object.entries(greedy)) log(`  greedy (${name}): ${s.clients.map((c) => `${c.name} ${JSON.stringify(c.byStatus)} p50 ${c.ok.p50} p99 ${c.ok.p99} ms`).join('; ')}`);
  const politeP99 = (s: ScenarioFigures) => s.clients.find((c) => c.name === 'polite')!.ok.p99;
  const politeP50 = (s: ScenarioFigures) => s.clients.find((c) => c.name === 'polite')!.ok.p50;
  const atSlots = sweep.find((s) => s.connections === DEFAULT_ES_MAX_IN_FLIGHT);
  const atCapacity = sweep.find((s) => s.requestsPerSecond === capacity)!;
  const figures = {
    bundle: { scale, rows: Object.values(loaded.counts).reduce((n, c) => n + c, 0) },
    seconds,
    mix: groupBy ? ['/v1/search?q=<200 one-typo names>&limit=50', ...facets] : ['/v1/search?q=<200 one-typo names>&limit=50'],
    groupBy,
    capacity: { requestsPerSecond: capacity, sweep, kneeConnections: knee, configuredMaxInFlight: DEFAULT_ES_MAX_IN_FLIGHT, configuredQueue: DEFAULT_ES_QUEUE },
    unloaded,
    politeAlone: alone,
    greedy: {
      ...greedy,
      politeP99OverAlone: {
        limited: round(politeP99(greedy.limited) / alone.ok.p99),
        unlimited: round(politeP99(greedy.unlimited) / alone.ok.p99),
        fresh: round(politeP99(greedy.fresh) / alone.ok.p99),
        freshUncapped: round(politeP99(greedy.freshUncapped) / alone.ok.p99),
        freshBesideResets: round(politeP99(greedy.freshBesideResets) / alone.ok.p99),
      },
      politeP50OverAlone: {
        limited: round(politeP50(greedy.limited) / alone.ok.p50),
        fresh: round(politeP50(greedy.fresh) / alone.ok.p50),
        freshUncapped: round(politeP50(greedy.freshUncapped) / alone.ok.p50),
        freshBesideResets: round(politeP50(greedy.freshBesideResets) / alone.ok.p50),
      },
    },
  };
  log(`  polite over alone, p50 / p99: ${JSON.stringify(figures.greedy.politeP50OverAlone)} / ${JSON.stringify(figures.greedy.politeP99OverAlone)}`);
  if (only === 'greedy') return figures;

  log(`overload: a crowd of ${crowdSize} clients at ${CROWD_CLIENT_RATE} req/s`);
  const crowd = {
    limited: await scenario(true, crowdPlans),
    unlimited: await scenario(false, crowdPlans),
    honoring: await scenario(true, crowdPlans.map((plan) => ({ ...plan, honorRetryAfter: true }))),
    fifo: await scenario(true, crowdPlans, { ES_QUEUE_ORDER: 'fifo' }),
  };
  const admittedP99 = (s: ScenarioFigures) => s.ok.p99;
  for (const [name, s] of Object.entries(crowd)) {
    log(`  crowd (${name}): goodput ${s.goodputOfCapacity} of capacity, admitted p99 ${admittedP99(s)} ms (${s.ok.count} answers), RSS ${JSON.stringify(s.gatewayRssMb)}, cores ${JSON.stringify(s.cores)}`);
  }
  log('overload: the bound beside the crowd, the crowd refused by a bare server');
  const beside = await boundBesideRefusals();
  log(`  ${beside.figures.requestsPerSecond} req/s, p50 ${beside.figures.p50Ms} ms, p99 ${beside.figures.p99Ms} ms, cores ${JSON.stringify(beside.cores)}`);

  log('overload: request log cost');
  const logOn = await spawnGateway({ ...env, LOG_LEVEL: 'info' });
  const logOff = await spawnGateway({ ...env, LOG_LEVEL: 'warn' });
  const rates = { health: { on: [] as number[], off: [] as number[] }, entities: { on: [] as number[], off: [] as number[] } };
  try {
    for (let r = 0; r < 2; r += 1) {
      for (const [key, p] of [['health', '/v1/health'], ['entities', '/v1/entities?limit=20']] as const) {
        rates[key].on.push((await drive({ url: logOn.url, requests: [{ path: p }] }, seconds / 4)).requestsPerSecond);
        rates[key].off.push((await drive({ url: logOff.url, requests: [{ path: p }] }, seconds / 4)).requestsPerSecond);
      }
    }
  } finally {
    await logOn.stop();
    await logOff.stop();
  }
  const cost = (k: keyof typeof rates) => ({ on: Math.round(mean(rates[k].on)), off: Math.round(mean(rates[k].off)), cost: round(1 - mean(rates[k].on) / mean(rates[k].off)) });

  return {
    ...figures,
    bound: {
      atSlots: atSlots && { connections: atSlots.connections, ofCapacity: round(atSlots.requestsPerSecond / capacity), p99OverUnloaded: round(atSlots.p99Ms / unloaded.p99Ms) },
      clientCores: { capacity: atCapacity.clientCores, crowd: crowd.limited.cores.clients },
      crowdOfBound: atSlots && round(crowd.limited.ok.count / seconds / atSlots.requestsPerSecond),
      ...(atSlots?.esCores !== undefined &&
        crowd.limited.cores.elasticsearch !== undefined && {
          esCores: { atSlots: atSlots.esCores, crowd: crowd.limited.cores.elasticsearch, crowdOfBound: round(crowd.limited.cores.elasticsearch / atSlots.esCores) },
        }),
      besideRefusals: {
        requestsPerSecond: beside.figures.requestsPerSecond,
        p50Ms: beside.figures.p50Ms,
        p99Ms: beside.figures.p99Ms,
        cores: beside.cores,
        crowdOfIt: round(crowd.limited.ok.count / seconds / beside.figures.requestsPerSecond),
        admittedP99OverIt: round(admittedP99(crowd.limited) / beside.figures.p99Ms),
      },
    },
    crowd: { ...crowd, admittedP99OverUnloaded: { limited: round(admittedP99(crowd.limited) / unloaded.p99Ms), unlimited: round(admittedP99(crowd.unlimited) / unloaded.p99Ms), honoring: round(admittedP99(crowd.honoring) / unloaded.p99Ms), fifo: round(admittedP99(crowd.fifo) / unloaded.p99Ms) } },
    requestLog: { health: cost('health'), entities: cost('entities') },
  };
}
