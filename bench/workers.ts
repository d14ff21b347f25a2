/**
 * Workers benchmark (`npm run bench -- workers [--seconds S] [--workers 1,2,4]`): the gateway with
 * 1, 2, 4 … workers up to the cores present, each with 10 connections per worker, on the http
 * benchmark's bundle and routes (search, entities, events, killmails; response cache and limits
 * off). At each worker count, measured back to back on the same connection count:
 *
 * - the gateway's requests/s per route, and its CPU milliseconds per request (primary and
 *   workers, from /proc);
 * - Elasticsearch answering the same requests directly (`direct`), and Elasticsearch's CPU
 *   milliseconds per request on both sides (its node stats: process.cpu.total_in_millis);
 * - the same workers answering `/v1/health` (`floor`).
 *
 * Gateway, Elasticsearch and the load generator share the machine, so their costs add: the
 * ceiling is `1 / (1/direct + 1/floor)` (bench/support.ts `ceiling`). Reported: the share of
 * the ceiling reached (goal ≥ 0.9 once there are workers enough), and the scaling over one
 * worker (goal ≥ 0.8 × W while Elasticsearch has idle cores). The CPU costs are what
 * docs/capacity.md turns into a capacity model.
 */
import { availableParallelism } from 'node:os';
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { ensureBundle } from '../generator/write-bundle.ts';
import { liveGeneration } from '../loader/generations.ts';
import { loadBundle } from '../loader/load-bundle.ts';
import { spawnGateway } from '../harness/gateway-process.ts';
import { childPids, cpuSeconds } from '../harness/proc.ts';
import type { Config } from '../src/config.ts';
import { concreteIndex } from '../src/indices/generation.ts';
import { rowRequest, searchPath } from '../src/search/search-service.ts';
import { type Case, PREFIX, cases } from './http.ts';
import { type LoadFigures, type Log, type Target, ceiling, drive, esCpuMillis, mergesSettled, round } from './support.ts';

/** Connections per worker: what one gateway process needs to stay busy (bench/http.ts drives one with 10). */
const CONNECTIONS_PER_WORKER = 10;
/** The http benchmark's routes this one scales (sources and current lists are cheaper variants of entities). */
const ROUTES = /^\/v1\/(search|entities|events|killmails)\b/;
/** The facets of the overload bench's mix (bench/overload.ts), each asked again and again as there. */
const FACETS = ['/v1/events?group_by=kind', '/v1/killmails?group_by=system', '/v1/entities?group_by=entityType'];

export interface WorkersRoute {
  route: string;
  gateway: LoadFigures;
  direct: LoadFigures;
  ceiling: number;
  /** Gateway requests/s over the ceiling. */
  ofCeiling: number;
  /** Gateway requests/s over the same route's with one worker. */
  overOneWorker: number;
  /** CPU milliseconds per request: the gateway's processes, and Elasticsearch's when the gateway sends and when the same requests go direct. */
  cpuMs: { gateway: number; esViaGateway: number; esDirect: number };
}

/** A route measured through the gateway alone: its costs per request, for the capacity model. */
export interface WorkersCost {
  route: string;
  gateway: LoadFigures;
  cpuMs: { gateway: number; esViaGateway: number };
}

export interface WorkersStep {
  workers: number;
  connections: number;
  floor: LoadFigures;
  /** CPU milliseconds per `/v1/health` request in the gateway's processes. */
  floorCpuMs: number;
  routes: WorkersRoute[];
  /** The overload bench's facets (its mix: three searches to one of these), at the largest worker count only. */
  facets?: WorkersCost[];
}

export interface WorkersBenchResult {
  cores: number;
  seconds: number;
  steps: WorkersStep[];
}

/** CPU seconds of a gateway: its primary and every worker (Linux: the primary's children). */
async function gatewayCpuSeconds(pid: number): Promise<number> {
  const each = await Promise.all([pid, ...(await childPids(pid))].map((p) => cpuSeconds(p).catch(() => 0)));
  return each.reduce((a, b) => a + b, 0);
}

/** 1, 2, 4 … up to the cores, the cores themselves included. */
export function workerCounts(cores: number): number[] {
  const counts: number[] = [];
  for (let n = 1; n < cores; n *= 2) counts.push(n);
  counts.push(cores);
  return counts;
}

export async function benchWorkers(options: { client: Client; esUrl: string; config: Readonly<Config>; scale: number; seconds: number; counts?: number[]; log: Log }): Promise<WorkersBenchResult> {
  const { client, esUrl, config, scale, seconds, log } = options;
  const cores = availableParallelism();
  const dir = await ensureBundle(path.join(config.cacheDir, `bench-bundle-scale-${scale}`), { scale }, log);
  await loadBundle(dir, { client, prefix: PREFIX, dataDir: path.join(config.cacheDir, 'bench-data'), cycleStarts: config.cycleStarts });
  await mergesSettled(client, log);
  const live = (await liveGeneration(client, PREFIX))!;
  const all = (await cases(dir, live.currentCycle)).filter((c) => ROUTES.test(c.route));
  const direct = (c: Case): Target => ({ url: esUrl, requests: c.bodies.map((b) => ({ path: searchPath(concreteIndex(PREFIX, live, c.index)), method: 'POST' as const, body: JSON.stringify(rowRequest(live, c.index, b)) })) });

  /** Drives `target`, reading the gateway's and Elasticsearch's CPU around it. */
  const costed = async (pid: number | undefined, target: Target, connections: number) => {
    const [gw, es] = [pid === undefined ? 0 : await gatewayCpuSeconds(pid), await esCpuMillis(esUrl)];
    const figures = await drive(target, seconds, connections);
    const requests = Math.max(1, figures.requests);
    const gatewayMs = pid === undefined ? 0 : (((await gatewayCpuSeconds(pid)) - gw) * 1000) / requests;
    return { figures, gatewayMs, esMs: ((await esCpuMillis(esUrl)) - es) / requests };
  };

  const steps: WorkersStep[] = [];
  const counts = options.counts ?? workerCounts(cores);
  for (const workers of counts) {
    const connections = CONNECTIONS_PER_WORKER * workers;
    const gateway = await spawnGateway({ ES_URL: esUrl, INDEX_PREFIX: PREFIX, RESPONSE_CACHE: 'off', WORKERS: String(workers) });
    try {
      const viaGateway = (c: Case): Target => ({ url: gateway.url, requests: c.paths.map((p) => ({ path: p })) });
      // Warm every worker (JIT, connections to Elasticsearch) before anything is measured.
      for (const c of all) await drive(viaGateway(c), 1, connections);
      const floor = await costed(gateway.pid, { url: gateway.url, requests: [{ path: '/v1/health' }] }, connections);
      const routes: WorkersRoute[] = [];
      for (const c of all) {
        const g = await costed(gateway.pid, viaGateway(c), connections);
        const d = await costed(undefined, direct(c), connections);
        const top = ceiling(d.figures.requestsPerSecond, floor.figures.requestsPerSecond);
        const one = steps[0]?.routes.find((r) => r.route === c.route)?.gateway.requestsPerSecond ?? g.figures.requestsPerSecond;
        routes.push({
          route: c.route,
          gateway: g.figures,
          direct: d.figures,
          ceiling: Math.round(top),
          ofCeiling: round(g.figures.requestsPerSecond / top),
          overOneWorker: round(g.figures.requestsPerSecond / one),
          cpuMs: { gateway: round(g.gatewayMs, 3), esViaGateway: round(g.esMs, 3), esDirect: round(d.esMs, 3) },
        });
        log(
          `workers ${workers} (${connections} conn) ${c.route}: gateway ${g.figures.requestsPerSecond} req/s (${round(g.gatewayMs, 3)} gw CPU ms, ${round(g.esMs, 3)} ES CPU ms), direct ${d.figures.requestsPerSecond} (${round(d.esMs, 3)} ES CPU ms), floor ${floor.figures.requestsPerSecond} → ${round(g.figures.requestsPerSecond / top)} of the ceiling, ${round(g.figures.requestsPerSecond / one)}× one worker`,
        );
      }
      const facets: WorkersCost[] = [];
      if (workers === Math.max(...counts)) {
        for (const route of FACETS) {
          const f = await costed(gateway.pid, { url: gateway.url, requests: [{ path: route }] }, connections);
          facets.push({ route, gateway: f.figures, cpuMs: { gateway: round(f.gatewayMs, 3), esViaGateway: round(f.esMs, 3) } });
          log(`workers ${workers} (${connections} conn) ${route}: gateway ${f.figures.requestsPerSecond} req/s (${round(f.gatewayMs, 3)} gw CPU ms, ${round(f.esMs, 3)} ES CPU ms)`);
        }
      }
      steps.push({ workers, connections, floor: floor.figures, floorCpuMs: round(floor.gatewayMs, 3), routes, ...(facets.length && { facets }) });
    } finally {
      await gateway.stop();
    }
  }
  return { cores, seconds, steps };
}
