/**
 * Gateway benchmark: each list route and search against the same Elasticsearch request sent
 * directly (built by the project's own src/query builders for the live generation), with the
 * gateway's floor (`/v1/health`) measured in the same rounds. Targets are interleaved
 * (health, then each route through the gateway and directly), so drift on shared cores hits
 * both sides alike. Search rotates 200 different one-typo names, never one repeated string.
 *
 * Reported per route: requests/s and p50/p99 of both sides, and the share of the ceiling
 * `1 / (1/direct + 1/health)` the gateway reaches — with the response cache off, so every
 * request reaches Elasticsearch. Beside them, the direct requests through one bare Node hop
 * (bench/one-hop.ts: forwards and answers, nothing else): what any Node process in between
 * reaches on these cores; and through the gateway's own stack doing none of its work
 * (bench/stack-hop.ts: Koa, every middleware, the Elasticsearch client): what a gateway built
 * as this one reaches. The CPU milliseconds per request of the gateway and of both hops, in the
 * closed loop and with the three side by side at the same fixed rate.
 *
 * Then the response cache (on, as by default): repeated reads (the first page of events, a
 * `group_by`, an entity) against the `/v1/health` floor measured beside them, and against the
 * same bodies answered from memory by a bare Node server (bench/fixed-answer.ts: what sending
 * that many bytes costs any process on these cores; an events page is 48 KB); and single
 * flight: 256 identical cold requests at once, the Elasticsearch searches they caused counted
 * by Elasticsearch itself (`_stats/search` of the index read).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { readAllRows } from '../generator/read-bundle.ts';
import { ensureBundle } from '../generator/write-bundle.ts';
import { liveGeneration } from '../loader/generations.ts';
import { loadBundle } from '../loader/load-bundle.ts';
import { GATEWAY_ENV, spawnGateway } from '../harness/gateway-process.ts';
import { spawnListener } from '../harness/listener.ts';
import { cpuSeconds } from '../harness/proc.ts';
import { type Config, PROJECT_ROOT } from '../src/config.ts';
import type { IndexName } from '../src/indices/all.ts';
import { type GenerationDoc, concreteIndex } from '../src/indices/generation.ts';
import { toCurrentEntityListBody } from '../src/query/current.ts';
import { toEntityListBody } from '../src/query/entities.ts';
import type { SearchBody } from '../src/query/list.ts';
import { toSourceListBody } from '../src/query/provenance.ts';
import { TIMELINE_COUNT_UP_TO, toEventListBody, toKillmailListBody } from '../src/query/timeline.ts';
import { rowRequest, searchPath } from '../src/search/search-service.ts';
import { type LoadFigures, type Log, type Target, ceiling, drive, mean, meanFigures, round, typo } from './support.ts';

export const PREFIX = 'bench-http';
const LIMIT = 50;
const QUERIES = 200;

export interface RouteFigures {
  route: string;
  gateway: LoadFigures;
  direct: LoadFigures;
  health: number;
  ceiling: number;
  /** Gateway requests/s over the ceiling. */
  ofCeiling: number;
  /** The same requests as `direct` through one bare Node hop (bench/one-hop.ts): the limit of any Node process in between. */
  hop: LoadFigures;
  /** The hop's requests/s over the ceiling. */
  hopOfCeiling: number;
  /** Gateway requests/s over the hop's. */
  ofHop: number;
  /** The same requests through the gateway's stack doing none of its work (bench/stack-hop.ts): the limit of a gateway built as this one. */
  stackHop: LoadFigures;
  /** The stack hop's requests/s over the ceiling. */
  stackHopOfCeiling: number;
  /** Gateway requests/s over the stack hop's. */
  ofStackHop: number;
  /** CPU milliseconds per request of the gateway's process and of the hops', in the closed loop. */
  cpuMs: { gateway: number; hop: number; stackHop: number };
  /** The three side by side, each at the same fixed rate: CPU milliseconds per request, and the stack hop's over the gateway's. */
  atRate: { rate: number; cpuMs: { gateway: number; stackHop: number; hop: number }; stackOfGateway: number };
}

export interface CachedFigures {
  route: string;
  gateway: LoadFigures;
  health: number;
  /** Hit requests/s over the health floor (goal ≥ 0.8). */
  ofHealth: number;
  /** The same body answered from memory by a bare Node server (bench/fixed-answer.ts): requests/s, and the hits' share of it. */
  fixed: number;
  ofFixed: number;
  /** CPU milliseconds per request of the gateway: a hit, and `/v1/health`. */
  cpuMs: { hit: number; health: number };
}

export interface HttpBenchResult {
  bundle: { scale: number; entities: number };
  seconds: number;
  rounds: number;
  health: LoadFigures;
  routes: RouteFigures[];
  cached: CachedFigures[];
  /** 256 identical cold requests at once: the searches Elasticsearch counted for them. */
  coalescing: { requests: number; searches: number };
}

export interface Case {
  route: string;
  /** Gateway paths and the matching direct bodies, rotated in step. */
  paths: string[];
  index: IndexName;
  bodies: SearchBody[];
}

/** First pages count their rows as the gateway does: exactly, and timelines up to TIMELINE_COUNT_UP_TO. */
const EXACT = { count: true } as const;
const TIMELINE = { count: TIMELINE_COUNT_UP_TO };

export async function cases(dir: string, currentCycle: number): Promise<Case[]> {
  const scope = { environment: 'stillness', scope: { kind: 'default' } as const, limit: LIMIT };
  const names = (await readAllRows(dir, 'entities.jsonl'))
    .filter((r) => r.environment === 'stillness')
    .map((r) => typo(String(r.name)))
    .filter((q): q is string => q !== undefined);
  const typos = [...new Set(names)].slice(0, QUERIES);
  const fixed = (route: string, index: IndexName, body: SearchBody): Case => ({ route, paths: [route], index, bodies: [body] });
  return [
    {
      route: `/v1/search?q=<${typos.length} rotating one-typo names>&limit=${LIMIT}`,
      paths: typos.map((q) => `/v1/search?q=${encodeURIComponent(q)}&limit=${LIMIT}`),
      index: 'entities',
      bodies: typos.map((q) => toEntityListBody({ ...scope, q }, currentCycle, EXACT)),
    },
    fixed(`/v1/entities?limit=${LIMIT}`, 'entities', toEntityListBody(scope, currentCycle, EXACT)),
    fixed(`/v1/events?limit=${LIMIT}`, 'events', toEventListBody(scope, currentCycle, TIMELINE)),
    fixed(`/v1/killmails?limit=${LIMIT}`, 'killmails', toKillmailListBody(scope, currentCycle, TIMELINE)),
    fixed(`/v1/current/systems?limit=${LIMIT}`, 'current_entities', toCurrentEntityListBody('systems', scope, currentCycle, EXACT)),
    fixed(`/v1/sources?limit=${LIMIT}`, 'sources', toSourceListBody(scope, currentCycle, EXACT)),
  ];
}

export async function benchHttp(options: { client: Client; esUrl: string; config: Readonly<Config>; scale: number; seconds: number; rounds: number; log: Log }): Promise<HttpBenchResult> {
  const { client, esUrl, config, scale, seconds, rounds, log } = options;
  const dir = await ensureBundle(path.join(config.cacheDir, `bench-bundle-scale-${scale}`), { scale }, log);
  await loadBundle(dir, { client, prefix: PREFIX, dataDir: path.join(config.cacheDir, 'bench-data'), cycleStarts: config.cycleStarts });
  const live = (await liveGeneration(client, PREFIX))!;
  const all = await cases(dir, live.currentCycle);
  // Each case's direct requests, in the order the stack hop numbers them (`/hop/<n>`).
  const directs = all.map((c) => c.bodies.map((b) => ({ path: searchPath(concreteIndex(PREFIX, live, c.index)), method: 'POST' as const, body: JSON.stringify(rowRequest(live, c.index, b)) })));
  const work = await mkdtemp(path.join(tmpdir(), 'bench-stack-hop-'));
  await writeFile(path.join(work, 'requests.json'), JSON.stringify(directs.flat()));
  const gateway = await spawnGateway({ ES_URL: esUrl, INDEX_PREFIX: PREFIX, RESPONSE_CACHE: 'off' });
  const hop = await spawnListener(path.join(PROJECT_ROOT, 'bench', 'one-hop.ts'), { ES_URL: esUrl });
  const stackHop = await spawnListener(path.join(PROJECT_ROOT, 'bench', 'stack-hop.ts'), { ...GATEWAY_ENV, ES_URL: esUrl, INDEX_PREFIX: PREFIX, RESPONSE_CACHE: 'off', HOP_REQUESTS_FILE: path.join(work, 'requests.json') });
  const firstHop = directs.map((_, i) => directs.slice(0, i).reduce((n, d) => n + d.length, 0));
  const viaStack = (i: number): Target => ({ url: stackHop.url, requests: directs[i]!.map((_, k) => ({ path: `/hop/${firstHop[i]! + k}` })) });
  const viaGateway = (c: Case): Target => ({ url: gateway.url, requests: c.paths.map((p) => ({ path: p })) });
  let uncached: Pick<HttpBenchResult, 'health' | 'routes'>;
  try {
    const health = () => drive({ url: gateway.url, requests: [{ path: '/v1/health' }] }, seconds);
    // Warm every side once (JIT, caches, connections) before anything is measured.
    for (const [i, c] of all.entries()) {
      await drive(viaGateway(c), 1);
      await drive({ url: hop.url, requests: directs[i]!.slice(0, 1) }, 1);
      await drive(viaStack(i), 1);
    }
    const healths: LoadFigures[] = [];
    type Run = { gateway: LoadFigures[]; direct: LoadFigures[]; hop: LoadFigures[]; stackHop: LoadFigures[]; health: number[]; cpuMs: { gateway: number[]; hop: number[]; stackHop: number[] } };
    const runs = new Map<string, Run>();
    for (let r = 0; r < rounds; r += 1) {
      for (const [i, c] of all.entries()) {
        const h = await health();
        healths.push(h);
        const g = await costed(gateway.pid, viaGateway(c), seconds);
        const direct = directs[i]!;
        const d = await drive({ url: esUrl, requests: direct }, seconds);
        const o = await costed(hop.pid, { url: hop.url, requests: direct }, seconds);
        const s = await costed(stackHop.pid, viaStack(i), seconds);
        const run = runs.get(c.route) ?? { gateway: [], direct: [], hop: [], stackHop: [], health: [], cpuMs: { gateway: [], hop: [], stackHop: [] } };
        run.gateway.push(g.figures);
        run.direct.push(d);
        run.hop.push(o.figures);
        run.stackHop.push(s.figures);
        run.health.push(h.requestsPerSecond);
        run.cpuMs.gateway.push(g.cpuMs);
        run.cpuMs.hop.push(o.cpuMs);
        run.cpuMs.stackHop.push(s.cpuMs);
        runs.set(c.route, run);
        log(
          `${c.route}: gateway ${g.figures.requestsPerSecond} req/s (p50 ${g.figures.p50Ms} ms, ${round(g.cpuMs, 3)} CPU ms), direct ${d.requestsPerSecond} req/s, one hop ${o.figures.requestsPerSecond} (${round(o.cpuMs, 3)} CPU ms), stack hop ${s.figures.requestsPerSecond} (${round(s.cpuMs, 3)} CPU ms), health ${h.requestsPerSecond}`,
        );
      }
    }
    // The same three at once, each at the same fixed rate (a quarter of the gateway's closed-loop
    // rate): CPU per request read at one rate and one machine state. In the closed loop it falls
    // as the rate rises, so processes measured one after another compare badly.
    const paired = new Map<string, { rate: number; gateway: number[]; stackHop: number[]; hop: number[] }>();
    for (let r = 0; r < rounds; r += 1) {
      for (const [i, c] of all.entries()) {
        const pair = paired.get(c.route) ?? { rate: Math.max(20, Math.round(meanFigures(runs.get(c.route)!.gateway).requestsPerSecond / 4)), gateway: [], stackHop: [], hop: [] };
        const [g, s, o] = await Promise.all([
          costed(gateway.pid, viaGateway(c), seconds, pair.rate),
          costed(stackHop.pid, viaStack(i), seconds, pair.rate),
          costed(hop.pid, { url: hop.url, requests: directs[i]! }, seconds, pair.rate),
        ]);
        pair.gateway.push(g.cpuMs);
        pair.stackHop.push(s.cpuMs);
        pair.hop.push(o.cpuMs);
        paired.set(c.route, pair);
        log(`${c.route}, side by side at ${pair.rate} req/s each: CPU ms per request gateway ${round(g.cpuMs, 3)}, stack hop ${round(s.cpuMs, 3)}, one hop ${round(o.cpuMs, 3)}`);
      }
    }
    const routes = [...runs].map(([route, run]): RouteFigures => {
      const pair = paired.get(route)!;
      const atRate = { gateway: round(mean(pair.gateway), 3), stackHop: round(mean(pair.stackHop), 3), hop: round(mean(pair.hop), 3) };
      const g = meanFigures(run.gateway);
      const d = meanFigures(run.direct);
      const o = meanFigures(run.hop);
      const s = meanFigures(run.stackHop);
      const h = mean(run.health);
      const limit = ceiling(d.requestsPerSecond, h);
      return {
        route,
        gateway: g,
        direct: d,
        health: Math.round(h),
        ceiling: Math.round(limit),
        ofCeiling: round(g.requestsPerSecond / limit),
        hop: o,
        hopOfCeiling: round(o.requestsPerSecond / limit),
        ofHop: round(g.requestsPerSecond / o.requestsPerSecond),
        stackHop: s,
        stackHopOfCeiling: round(s.requestsPerSecond / limit),
        ofStackHop: round(g.requestsPerSecond / s.requestsPerSecond),
        cpuMs: { gateway: round(mean(run.cpuMs.gateway), 3), hop: round(mean(run.cpuMs.hop), 3), stackHop: round(mean(run.cpuMs.stackHop), 3) },
        atRate: { rate: pair.rate, cpuMs: atRate, stackOfGateway: round(atRate.stackHop / atRate.gateway) },
      };
    });
    uncached = { health: meanFigures(healths), routes };
  } finally {
    await gateway.stop();
    await hop.stop();
    await stackHop.stop();
    await rm(work, { recursive: true, force: true });
  }
  const entities = (await client.count({ index: concreteIndex(PREFIX, live, 'entities') })).count;
  const { cached, coalescing } = await benchCache(client, esUrl, dir, live, seconds, rounds, log);
  return { bundle: { scale, entities }, seconds, rounds, ...uncached, cached, coalescing };
}

/** A run of `seconds` against `target`, and the CPU milliseconds per request of the process `pid` during it. */
async function costed(pid: number, target: Target, seconds: number, rate?: number): Promise<{ figures: LoadFigures; cpuMs: number }> {
  const before = await cpuSeconds(pid);
  const figures = await drive(target, seconds, 10, rate);
  return { figures, cpuMs: (((await cpuSeconds(pid)) - before) * 1000) / Math.max(1, figures.requests) };
}

/** Searches Elasticsearch has run on an index (its own counter). */
async function searches(client: Client, index: string): Promise<number> {
  const stats = await client.indices.stats({ index, metric: 'search' });
  return stats._all.primaries!.search!.query_total!;
}

/** The response cache at its defaults: repeated reads against the health floor, and one cold burst. */
async function benchCache(client: Client, esUrl: string, dir: string, live: GenerationDoc, seconds: number, rounds: number, log: Log): Promise<Pick<HttpBenchResult, 'cached' | 'coalescing'>> {
  const entity = (await readAllRows(dir, 'entities.jsonl')).find((r) => r.environment === 'stillness')!;
  const eventsPage = `/v1/events?limit=${LIMIT}`;
  // The plain answers (autocannon asks no encoding), and the events page as browsers and most
  // clients ask it (Accept-Encoding: gzip): 6 KB instead of 48 KB for the client to read.
  const repeated: { label: string; path: string; gzip?: boolean }[] = [
    ...[eventsPage, '/v1/events?group_by=kind', `/v1/entities/${encodeURIComponent(String(entity.id))}`].map((p) => ({ label: p, path: p })),
    { label: `${eventsPage} (gzip)`, path: eventsPage, gzip: true },
  ];
  const gateway = await spawnGateway({ ES_URL: esUrl, INDEX_PREFIX: PREFIX });
  // The hits' exact bodies, for the bare server.
  const body = async (p: string, encoding: string) => Buffer.from(await (await fetch(`${gateway.url}${p}`, { headers: { 'accept-encoding': encoding } })).arrayBuffer()).toString('base64');
  const bodies = Object.fromEntries(await Promise.all(repeated.map(async (r) => [r.gzip ? `gzip ${r.path}` : r.path, await body(r.path, r.gzip ? 'gzip' : 'identity')])));
  const work = await mkdtemp(path.join(tmpdir(), 'bench-answers-'));
  await writeFile(path.join(work, 'answers.json'), JSON.stringify(bodies));
  const fixed = await spawnListener(path.join(PROJECT_ROOT, 'bench', 'fixed-answer.ts'), { ANSWERS_FILE: path.join(work, 'answers.json') });
  try {
    const runs = new Map<string, { gateway: LoadFigures[]; health: number[]; fixed: number[]; cpuMs: { hit: number[]; health: number[] } }>();
    const target = (url: string, r: (typeof repeated)[number]): Target => ({ url, requests: [{ path: r.path, ...(r.gzip && { headers: { 'accept-encoding': 'gzip' } }) }] });
    for (const r of repeated) await drive(target(gateway.url, r), 1);
    for (let pass = 0; pass < rounds; pass += 1) {
      for (const r of repeated) {
        const h = await costed(gateway.pid, { url: gateway.url, requests: [{ path: '/v1/health' }] }, seconds);
        const g = await costed(gateway.pid, target(gateway.url, r), seconds);
        const f = await drive(target(fixed.url, r), seconds);
        const run = runs.get(r.label) ?? { gateway: [], health: [], fixed: [], cpuMs: { hit: [], health: [] } };
        run.gateway.push(g.figures);
        run.health.push(h.figures.requestsPerSecond);
        run.fixed.push(f.requestsPerSecond);
        run.cpuMs.hit.push(g.cpuMs);
        run.cpuMs.health.push(h.cpuMs);
        runs.set(r.label, run);
        log(`${r.label} (cached): ${g.figures.requestsPerSecond} req/s (p50 ${g.figures.p50Ms} ms, ${round(g.cpuMs, 3)} CPU ms), health ${h.figures.requestsPerSecond} (${round(h.cpuMs, 3)} CPU ms), the same body from a bare server ${f.requestsPerSecond}`);
      }
    }
    const cached = [...runs].map(([route, run]): CachedFigures => {
      const g = run.gateway.reduce((a, b) => (b.requestsPerSecond > a.requestsPerSecond ? b : a));
      const rps = mean(run.gateway.map((f) => f.requestsPerSecond));
      const h = mean(run.health);
      const f = mean(run.fixed);
      return {
        route,
        gateway: { ...g, requestsPerSecond: Math.round(rps) },
        health: Math.round(h),
        ofHealth: round(rps / h),
        fixed: Math.round(f),
        ofFixed: round(rps / f),
        cpuMs: { hit: round(mean(run.cpuMs.hit), 3), health: round(mean(run.cpuMs.health), 3) },
      };
    });
    // A request nobody asked before (its own kind filter), 256 times at once.
    const cold = '/v1/events?limit=37&kind=character.created&cycles=all';
    const index = concreteIndex(PREFIX, live, 'events');
    const before = await searches(client, index);
    await Promise.all(Array.from({ length: 256 }, () => fetch(`${gateway.url}${cold}`).then((r) => r.arrayBuffer())));
    const coalescing = { requests: 256, searches: (await searches(client, index)) - before };
    log(`single flight: 256 identical cold requests, ${coalescing.searches} Elasticsearch search(es)`);
    return { cached, coalescing };
  } finally {
    await gateway.stop();
    await fixed.stop();
    await rm(work, { recursive: true, force: true });
  }
}
