/**
 * What each list route costs Elasticsearch: its process CPU (`_nodes/stats/process`, see
 * `esCpuMillis`) per request, against Elasticsearch's own floor measured beside it (a `size: 0`
 * `match_none` search on the same index over the same keep-alive connections).
 *
 * The requests the gateway sends are not rebuilt here but captured: the gateway runs once behind
 * a recording proxy and answers each route's paths; every Elasticsearch request a page caused
 * (its search, and any count or second search) is kept, except the generation lookup, which is
 * made once a second whatever the load. Then, per route, interleaved in rounds: the floor, the
 * captured requests sent straight to Elasticsearch (`direct`, per gateway request: a page that
 * sends two searches costs both), the same without their rows (`noRows`: no stored fields, no row
 * doc values: the bound of any page that returns rows), and the route through a gateway (`gateway`: the cost the
 * gateway's whole request puts on Elasticsearch, whatever it sends). Elasticsearch is shared, so
 * each figure is read beside its floor and the ratio is what compares across runs.
 */
import { type IncomingMessage, type ServerResponse, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { readAllRows } from '../generator/read-bundle.ts';
import { ensureBundle } from '../generator/write-bundle.ts';
import { liveGeneration } from '../loader/generations.ts';
import { loadBundle } from '../loader/load-bundle.ts';
import { spawnGateway } from '../harness/gateway-process.ts';
import type { Config } from '../src/config.ts';
import type { IndexName } from '../src/indices/all.ts';
import { ROW } from '../src/indices/description.ts';
import { META_INDEX, aliasName, concreteIndex } from '../src/indices/generation.ts';
import { type Log, type Target, drive, esCpuMillis, mean, round, typo } from './support.ts';

const PREFIX = 'bench-es-cost';
const LIMIT = 50;
const QUERIES = 200;
/** How many pages deep the deep page of events is read (its cursor walked through the gateway), at most. */
const DEEP_PAGES = 60;

interface Captured {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

interface Case {
  route: string;
  index: IndexName;
  /** Gateway paths, rotated. */
  paths: string[];
  /**
   * An aggregation Elasticsearch's shard request cache answers once it ran (`size: 0`): replayed
   * directly with `request_cache=false`, so that its figure is what computing it costs — the
   * cost of the first ask after a swap, and of every ask the cache does not hold.
   */
  uncached?: boolean;
}

export interface EsCostFigures {
  route: string;
  /** Elasticsearch requests one gateway request of this route sent (mean over its paths). */
  esRequestsPerPage: number;
  /**
   * ES CPU ms per request: the floor, the captured requests sent directly (per page), the same
   * without their rows (`noRows`: the bound of any page that returns rows), and the route through
   * the gateway.
   */
  cpuMs: { floor: number; direct: number; noRows: number; gateway: number };
  /** Over the floor. */
  directOfFloor: number;
  gatewayOfFloor: number;
  /**
   * The least of each over the rounds, and its ratios: Elasticsearch is shared, and what others
   * ask of it meanwhile only ever adds to a reading, so the least is the one it spoiled least.
   */
  leastCpuMs: { floor: number; direct: number; noRows: number; gateway: number };
  leastDirectOfFloor: number;
  leastNoRowsOfFloor: number;
  leastGatewayOfFloor: number;
  /** Requests/s of each side (closed loop, 10 connections). */
  rate: { floor: number; direct: number; gateway: number };
}

export interface EsCostResult {
  bundle: { scale: number };
  seconds: number;
  rounds: number;
  routes: EsCostFigures[];
  /** Example captured request of each route (path and body), so a run says what it measured. */
  captured: Record<string, Captured[]>;
}

/** A proxy in front of Elasticsearch that keeps every request's method, path and body. */
async function recordingProxy(esUrl: string): Promise<{ url: string; take(): Captured[]; close(): Promise<void> }> {
  const target = new URL(esUrl.split(',')[0]!);
  let seen: Captured[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method === 'GET' ? 'GET' : 'POST', path: req.url!, ...(body.length > 0 && { body: body.toString('utf8') }) });
      const headers = { ...req.headers, host: target.host };
      const forward = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      forward.on('error', () => res.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    take() {
      const taken = seen;
      seen = [];
      return taken;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The captured requests with their rows left out — no stored fields, no row doc values — and
 * everything else as sent: what the page costs Elasticsearch before it reads a row.
 */
function withoutRows(requests: Captured[]): Captured[] {
  return requests.map((request) => {
    if (!request.body || !request.path.includes('/_search')) return request;
    const { docvalue_fields: fields = [], ...body } = JSON.parse(request.body) as { docvalue_fields?: unknown[] };
    const kept = fields.filter((field) => field !== ROW);
    return { ...request, body: JSON.stringify({ ...body, stored_fields: '_none_', ...(kept.length ? { docvalue_fields: kept } : {}) }) };
  });
}

/** A run of `seconds` against `target` and Elasticsearch's CPU milliseconds per request meanwhile. */
async function esCosted(esUrl: string, target: Target, seconds: number, log: Log): Promise<{ cpuMs: number; rate: number } | undefined> {
  const before = await esCpuMillis(esUrl);
  const figures = await drive(target, seconds);
  const after = await esCpuMillis(esUrl);
  // A run with failures is left out (said in the log), not averaged in: its requests cost otherwise.
  if (figures.non2xx > 0 || figures.errors > 0) return void log(`${target.url}${target.requests[0]!.path}: ${figures.non2xx} non-2xx, ${figures.errors} errors; this reading is left out`);
  return { cpuMs: (after - before) / Math.max(1, figures.requests), rate: figures.requestsPerSecond };
}

/** The path of the events page `DEEP_PAGES` pages in (or the last one with a next page), walked through the gateway. */
async function deepEventsPath(gatewayUrl: string): Promise<string> {
  let pagePath = `/v1/events?limit=${LIMIT}`;
  for (let page = 0; page < DEEP_PAGES; page += 1) {
    const cursor = ((await (await fetch(`${gatewayUrl}${pagePath}`)).json()) as { nextCursor?: string }).nextCursor;
    if (!cursor) break;
    pagePath = `/v1/events?limit=${LIMIT}&cursor=${encodeURIComponent(cursor)}`;
  }
  return pagePath;
}

export async function benchEsCost(options: { client: Client; esUrl: string; config: Readonly<Config>; scale: number; seconds: number; rounds: number; log: Log }): Promise<EsCostResult> {
  const { client, esUrl, config, scale, seconds, rounds, log } = options;
  const dir = await ensureBundle(path.join(config.cacheDir, `bench-bundle-scale-${scale}`), { scale }, log);
  if (!(await liveGeneration(client, PREFIX))) await loadBundle(dir, { client, prefix: PREFIX, dataDir: path.join(config.cacheDir, 'bench-data'), cycleStarts: config.cycleStarts });
  const live = (await liveGeneration(client, PREFIX))!;
  const entityRows = await readAllRows(dir, 'entities.jsonl');
  const entityIds = new Set(entityRows.map((r) => r.id));
  const names = entityRows
    .filter((r) => r.environment === 'stillness')
    .map((r) => typo(String(r.name)))
    .filter((q): q is string => q !== undefined);
  const typos = [...new Set(names)].slice(0, QUERIES);
  const fixed = (route: string, index: IndexName): Case => ({ route, index, paths: [route] });
  const all: Case[] = [
    { route: `/v1/search?q=<${typos.length} rotating one-typo names>&limit=${LIMIT}`, index: 'entities', paths: typos.map((q) => `/v1/search?q=${encodeURIComponent(q)}&limit=${LIMIT}`) },
    fixed(`/v1/entities?limit=${LIMIT}`, 'entities'),
    fixed(`/v1/events?limit=${LIMIT}`, 'events'),
    fixed(`/v1/killmails?limit=${LIMIT}`, 'killmails'),
    fixed(`/v1/current/systems?limit=${LIMIT}`, 'current_entities'),
    fixed(`/v1/sources?limit=${LIMIT}`, 'sources'),
  ];
  // Activity: the characters and systems most killmails name, rotated, computed each time.
  const killmails = (await readAllRows(dir, 'killmails.jsonl')).filter((r) => r.environment === 'stillness');
  const most = (ids: unknown[]) => {
    const counts = new Map<string, number>();
    for (const id of ids) if (typeof id === 'string' && entityIds.has(id)) counts.set(id, (counts.get(id) ?? 0) + 1);
    return [...counts].sort((a, b) => b[1] - a[1]).slice(0, QUERIES).map(([id]) => `/v1/entities/${encodeURIComponent(id)}/activity`);
  };
  all.push(
    { route: '/v1/entities/<character>/activity', index: 'killmails', paths: most(killmails.map((r) => r.victimCharacterId)), uncached: true },
    { route: '/v1/entities/<system>/activity', index: 'killmails', paths: most(killmails.map((r) => r.systemId)), uncached: true },
  );
  // Battles: the first page, at the default gap and the widest, and an entity's battles.
  const involvedIn = most(killmails.map((r) => r.victimCharacterId)).map((p) => p.replace(/^\/v1\/entities\/(.*)\/activity$/, '$1'));
  all.push(
    fixed(`/v1/battles?limit=${LIMIT}`, 'battle_kills'),
    fixed(`/v1/battles?limit=${LIMIT}&gap=60`, 'battle_kills'),
    { route: `/v1/battles?involved=<character>&limit=${LIMIT}`, index: 'battle_kills', paths: involvedIn.map((id) => `/v1/battles?involved=${id}&limit=${LIMIT}`) },
  );

  // Capture: each path once through a gateway behind the recording proxy.
  const proxy = await recordingProxy(esUrl);
  const recorder = await spawnGateway({ ES_URL: proxy.url, INDEX_PREFIX: PREFIX, RESPONSE_CACHE: 'off' });
  const sent = new Map<string, Captured[]>();
  try {
    const deep = await deepEventsPath(recorder.url);
    all.push({ route: `/v1/events?limit=${LIMIT}&cursor=<page ${DEEP_PAGES + 1}>`, index: 'events', paths: [deep] });
    for (const c of all) {
      proxy.take();
      for (const p of c.paths) {
        const answer = await fetch(`${recorder.url}${p}`);
        await answer.arrayBuffer();
        if (!answer.ok) throw new Error(`${p} answered ${answer.status}`);
      }
      // The generation lookup is made once a second whatever the load; it is not a page's.
      sent.set(c.route, proxy.take().filter((r) => !r.path.startsWith(`/${aliasName(PREFIX, META_INDEX)}/`)));
    }
  } finally {
    await recorder.stop();
    await proxy.close();
  }

  const gateway = await spawnGateway({ ES_URL: esUrl, INDEX_PREFIX: PREFIX, RESPONSE_CACHE: 'off' });
  const runs = new Map<string, { floor: number[]; direct: number[]; noRows: number[]; gateway: number[]; rate: { floor: number[]; direct: number[]; gateway: number[] } }>();
  try {
    const floorOf = (c: Case): Target => ({ url: esUrl, requests: [{ path: `/${concreteIndex(PREFIX, live, c.index)}/_search`, method: 'POST', body: JSON.stringify({ size: 0, query: { match_none: {} } }) }] });
    const computed = (c: Case, requests: Captured[]) => (c.uncached ? requests.map((r) => ({ ...r, path: `${r.path}${r.path.includes('?') ? '&' : '?'}request_cache=false` })) : requests);
    const directOf = (c: Case): Target => ({ url: esUrl, requests: computed(c, sent.get(c.route)!) });
    const noRowsOf = (c: Case): Target => ({ url: esUrl, requests: computed(c, withoutRows(sent.get(c.route)!)) });
    const viaGateway = (c: Case): Target => ({ url: gateway.url, requests: c.paths.map((p) => ({ path: p })) });
    for (const c of all) {
      await drive(floorOf(c), 1);
      await drive(directOf(c), 1);
      await drive(viaGateway(c), 1);
    }
    for (let r = 0; r < rounds; r += 1) {
      for (const c of all) {
        const perPage = sent.get(c.route)!.length / c.paths.length;
        const f = await esCosted(esUrl, floorOf(c), seconds, log);
        const d = await esCosted(esUrl, directOf(c), seconds, log);
        const n = await esCosted(esUrl, noRowsOf(c), seconds, log);
        const g = await esCosted(esUrl, viaGateway(c), seconds, log);
        const run = runs.get(c.route) ?? { floor: [], direct: [], noRows: [], gateway: [], rate: { floor: [], direct: [], gateway: [] } };
        if (f) (run.floor.push(f.cpuMs), run.rate.floor.push(f.rate));
        if (d) (run.direct.push(d.cpuMs * perPage), run.rate.direct.push(d.rate / perPage));
        if (n) run.noRows.push(n.cpuMs * perPage);
        if (g) (run.gateway.push(g.cpuMs), run.rate.gateway.push(g.rate));
        runs.set(c.route, run);
        const shown = (r: { cpuMs: number } | undefined, times = 1) => (r ? round(r.cpuMs * times, 3) : 'left out');
        log(`${c.route}: ES CPU ms per request: floor ${shown(f)}, direct ${shown(d, perPage)} (${perPage} ES requests a page), without rows ${shown(n, perPage)}, through the gateway ${shown(g)}`);
      }
    }
  } finally {
    await gateway.stop();
  }
  const routes = all.map((c): EsCostFigures => {
    const run = runs.get(c.route)!;
    const floor = mean(run.floor);
    return {
      route: c.route,
      esRequestsPerPage: round(sent.get(c.route)!.length / c.paths.length),
      cpuMs: { floor: round(floor, 3), direct: round(mean(run.direct), 3), noRows: round(mean(run.noRows), 3), gateway: round(mean(run.gateway), 3) },
      directOfFloor: round(mean(run.direct) / floor),
      gatewayOfFloor: round(mean(run.gateway) / floor),
      leastCpuMs: { floor: round(Math.min(...run.floor), 3), direct: round(Math.min(...run.direct), 3), noRows: round(Math.min(...run.noRows), 3), gateway: round(Math.min(...run.gateway), 3) },
      leastDirectOfFloor: round(Math.min(...run.direct) / Math.min(...run.floor)),
      leastNoRowsOfFloor: round(Math.min(...run.noRows) / Math.min(...run.floor)),
      leastGatewayOfFloor: round(Math.min(...run.gateway) / Math.min(...run.floor)),
      rate: { floor: Math.round(mean(run.rate.floor)), direct: Math.round(mean(run.rate.direct)), gateway: Math.round(mean(run.rate.gateway)) },
    };
  });
  const captured = Object.fromEntries(all.map((c) => [c.route, sent.get(c.route)!.slice(0, 2)]));
  return { bundle: { scale }, seconds, rounds, routes, captured };
}
