/**
 * What the benchmarks share: the machine and cluster they ran on, autocannon runs reduced to the
 * figures we report, and the ceiling a gateway can reach on shared cores. The gateway they drive
 * runs in a child process (harness/gateway-process.ts), so the load generator never shares its
 * event loop.
 */
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@elastic/elasticsearch';
import autocannon from 'autocannon';
import { PROJECT_ROOT } from '../src/config.ts';

export type Log = (line: string) => void;

export interface Machine {
  cores: number;
  cpu: string;
  node: string;
  elasticsearch: string;
  esHeapMb: number;
  /** Cores other work kept busy when the run started (bench/support.ts, `quietMachine`). */
  busyCoresAtStart?: number;
  /** Per benchmark, the share of the cores' time the hypervisor gave elsewhere (steal, %). */
  stealPercent?: Record<string, number>;
}

/** The code measured: HEAD's short commit, `+ uncommitted changes` when the tree differs from it; undefined outside git. */
export function codeVersion(): string | undefined {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: PROJECT_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const commit = git('rev-parse', '--short', 'HEAD');
    return git('status', '--porcelain', '--untracked-files=no') === '' ? commit : `${commit} + uncommitted changes`;
  } catch {
    return undefined;
  }
}

/** The machine and the Elasticsearch node the figures were taken on. */
export async function describeMachine(esUrl: string): Promise<Machine> {
  const nodes = (await (await fetch(`${esUrl}/_nodes/jvm`)).json()) as { nodes: Record<string, { version: string; jvm: { mem: { heap_max_in_bytes: number } } }> };
  const node = Object.values(nodes.nodes)[0]!;
  return {
    cores: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    elasticsearch: node.version,
    esHeapMb: Math.round(node.jvm.mem.heap_max_in_bytes / 2 ** 20),
  };
}

/** The machine's CPU time so far (/proc/stat, in ticks): all of it, idle, and stolen by the hypervisor. */
export interface CpuTimes {
  total: number;
  idle: number;
  steal: number;
}

export async function cpuTimes(): Promise<CpuTimes> {
  // user nice system idle iowait irq softirq steal
  const fields = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  return { total: fields.reduce((sum, n) => sum + n, 0), idle: fields[3]! + fields[4]!, steal: fields[7]! };
}

/**
 * The share of the cores' time between two readings that the hypervisor gave to other guests
 * (steal), in %. On a shared VM the same requests run at rates a third apart from one hour to
 * the next (`/v1/health`: 8,890 req/s at 07:00 on 2026-11-27, 5,700 at 09:28). Steal tells one
 * cause of that, the host's other guests taking the cores, from those it cannot see (shared
 * caches, clock speed).
 */
export function stealPercent(before: CpuTimes, after: CpuTimes): number {
  const total = after.total - before.total;
  return total > 0 ? Math.round(((after.steal - before.steal) / total) * 1000) / 10 : 0;
}

/** Cores busy on the whole machine over `ms`, from /proc/stat (all of its processes). */
async function busyCores(ms: number): Promise<number> {
  const before = await cpuTimes();
  await sleep(ms);
  const after = await cpuTimes();
  const total = after.total - before.total;
  return total > 0 ? Math.round(((total - (after.idle - before.idle)) / total) * cpus().length * 100) / 100 : 0;
}

/** Cores other work may keep busy while a benchmark measures (Elasticsearch idle takes a few hundredths). */
export const QUIET_CORES = 0.3;

/**
 * Waits up to `maxMs` for the machine to be quiet (at most `threshold` cores busy) before a
 * run: on shared cores another process — a type check, a test run, a gateway left over — moves
 * every ratio (a run of 2026-11-27 read its capacity with a type check beside it). Returns the
 * busy cores found last, which the results record; after `maxMs` it measures anyway, and says so.
 */
export async function quietMachine(log: Log, threshold = QUIET_CORES, maxMs = 300_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    const busy = await busyCores(3000);
    if (busy <= threshold) return busy;
    if (Date.now() - started > maxMs) {
      log(`the machine is still busy (${busy} cores) after ${Math.round(maxMs / 1000)} s; measuring anyway (recorded with the results)`);
      return busy;
    }
    log(`the machine is busy (${busy} of ${cpus().length} cores); waiting for it to settle`);
    await sleep(5000);
  }
}

/** The fourth letter of the first long word replaced: a one-typo search. */
export function typo(name: string): string | undefined {
  const word = name.split(' ').find((w) => /^[A-Za-z]{5,}$/.test(w));
  if (!word) return undefined;
  return name.replace(word, word.slice(0, 3) + (word[3] === 'x' ? 'y' : 'x') + word.slice(4));
}

/**
 * Waits until Elasticsearch has no merge running: a fresh generation keeps merging for a while
 * after its load, and latencies taken then measure the merges, not the queries (a 10 M-row
 * generation: kind-filter p99 70 ms while merging, 26 ms after).
 */
export async function mergesSettled(client: Client, log: Log): Promise<void> {
  const started = Date.now();
  for (;;) {
    const stats = await client.nodes.stats({ metric: 'indices', index_metric: 'merge' });
    const running = Object.values(stats.nodes).reduce((n, node) => n + (node.indices?.merges?.current ?? 0), 0);
    if (running === 0) return;
    if (Date.now() - started > 600_000) return log('merges still running after 10 min; measuring anyway');
    await sleep(2000);
  }
}

export interface LoadFigures {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  non2xx: number;
  /** Answers other than 2xx by status ("429": 12), so a run's errors say what they were. */
  statuses: Record<string, number>;
  errors: number;
}

export interface Target {
  url: string;
  /** Requests each connection cycles through (rotating queries); one when the target is fixed. */
  requests: { path: string; method?: 'GET' | 'POST'; body?: string; headers?: Record<string, string> }[];
}

/** What every benchmark request sends. */
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

/**
 * autocannon appends every response body to a string (`req.body += data`,
 * lib/pipelinedRequestsQueue.js), for body checks this bench never asks for. That decodes the
 * body as UTF-8 text on the load generator's core: 12 µs for a 48 KB JSON page, but 78 µs for
 * its 6 KB gzip encoding, whose bytes take the decoder's slow path, which bounded the gzip
 * hits below /v1/health. Each connection keeps no body; bytes are still counted (from the
 * socket). Fails loudly if autocannon's client stops having that queue.
 */
function keepNoBody(client: autocannon.Client): void {
  const queue = (client as unknown as { pipelinedRequests?: { addBody?: unknown } }).pipelinedRequests;
  if (typeof queue?.addBody !== 'function') throw new Error('autocannon changed: its client has no pipelinedRequests.addBody to silence');
  queue.addBody = () => {};
}

/** Drives a target with autocannon for `seconds` (as fast as it answers, or at `rate` requests/s) and keeps the figures we report. */
export async function drive(target: Target, seconds: number, connections = 10, rate?: number): Promise<LoadFigures> {
  const result = await autocannon({
    url: target.url,
    connections,
    duration: seconds,
    ...(rate !== undefined && { overallRate: rate }),
    headers: JSON_HEADERS,
    setupClient: keepNoBody,
    // A request's own headers replace the run's in autocannon: they are added to them here.
    requests: target.requests.map((r) => ({ path: r.path, method: r.method ?? 'GET', ...(r.body === undefined ? {} : { body: r.body }), ...(r.headers && { headers: { ...JSON_HEADERS, ...r.headers } }) })),
  });
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    statuses: Object.fromEntries(
      Object.entries(result.statusCodeStats ?? {}).filter(([status]) => !status.startsWith('2')).map(([status, stats]) => [status, stats?.count ?? 0]),
    ),
    errors: result.errors + result.timeouts,
  };
}

/** The mean of each figure over several runs of one target (counts summed). */
export function meanFigures(runs: LoadFigures[]): LoadFigures {
  const avg = (pick: (f: LoadFigures) => number) => round(mean(runs.map(pick)), 1);
  const statuses: Record<string, number> = {};
  for (const run of runs) for (const [status, n] of Object.entries(run.statuses)) statuses[status] = (statuses[status] ?? 0) + n;
  return {
    requestsPerSecond: Math.round(mean(runs.map((f) => f.requestsPerSecond))),
    p50Ms: avg((f) => f.p50Ms),
    p99Ms: avg((f) => f.p99Ms),
    requests: runs.reduce((n, f) => n + f.requests, 0),
    non2xx: runs.reduce((n, f) => n + f.non2xx, 0),
    statuses,
    errors: runs.reduce((n, f) => n + f.errors, 0),
  };
}

/**
 * The best a gateway can do on cores it shares with Elasticsearch: its own per-request cost
 * (its floor, `/v1/health`) and Elasticsearch's (the same request sent directly) add up, so
 * its rate is at most `1 / (1/direct + 1/health)`.
 */
export function ceiling(direct: number, health: number): number {
  return 1 / (1 / direct + 1 / health);
}

export const round = (n: number, digits = 2) => Number(n.toFixed(digits));
export const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

/**
 * Elasticsearch's process CPU, milliseconds, summed over its nodes (`_nodes/stats/process`):
 * what a run cost Elasticsearch is the difference of two readings. A node refreshes these
 * figures at most once a `monitor.process.refresh_interval` (1 s by default) and answers the
 * last ones in between, so a reading taken before this call started is read again after that
 * interval: the figure is never older than the call.
 */
export async function esCpuMillis(esUrl: string): Promise<number> {
  const started = Date.now();
  for (let attempt = 0; ; attempt += 1) {
    const response = await fetch(`${esUrl.split(',')[0]!.replace(/\/$/, '')}/_nodes/stats/process?filter_path=nodes.*.process.timestamp,nodes.*.process.cpu.total_in_millis`);
    if (!response.ok) throw new Error(`_nodes/stats/process answered ${response.status}`);
    const nodes = Object.values(((await response.json()) as { nodes: Record<string, { process: { timestamp: number; cpu: { total_in_millis: number } } }> }).nodes);
    const oldest = Math.min(...nodes.map((n) => n.process.timestamp));
    if (oldest >= started || attempt === 5) return nodes.reduce((sum, n) => sum + n.process.cpu.total_in_millis, 0);
    await sleep(Math.min(1100, Math.max(50, oldest + 1000 - Date.now() + 20)));
  }
}
