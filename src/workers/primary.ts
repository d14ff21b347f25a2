/**
 * The primary of `WORKERS=<n>`: forks n gateway processes that share one port (node:cluster) and
 * serves no request itself. The workers accept from the one listening socket themselves
 * (`SCHED_NONE`), not through the primary's round-robin handoff: a connection waits in the
 * kernel's queue until a live worker takes it, where round-robin hands it to a worker over IPC
 * and loses it, unanswered and never closed, when that worker dies (or is stopped) before taking
 * it. Measured with two workers: 42–49 % of 800 connections to one of them. It
 * holds what must be one for the whole gateway: the rate limit's counters (rate-limiter-flexible's
 * cluster master, src/http/points.ts), each client's downloads and streams (./holds.ts) and the
 * sum of the workers' metrics (./metrics.ts).
 *
 * - A worker that dies is forked again in its place (same `WORKER_INDEX`, so the same share of
 *   the machine's totals), after a backoff that grows with the crashes of the last minute; at
 *   `CRASH_LIMIT` crashes in that minute the workers are crash-looping: the primary stops the
 *   rest and exits 1, so that a supervisor sees it.
 * - SIGTERM/SIGINT: every worker is told to stop (SIGTERM): it stops accepting, answers
 *   /v1/ready with 503, finishes what is in flight and exits; the primary exits 0 once all have
 *   (1 if any did not stop cleanly). A second signal kills them at once.
 */
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { RateLimiterClusterMaster } from 'rate-limiter-flexible';
import type { Config } from '../config.ts';
import { serveClusterHolds } from './holds.ts';
import { serveClusterMetrics } from './metrics.ts';
import { isGatewayMessage } from './messages.ts';

/** Crashes within `CRASH_WINDOW_MS` that mean the workers cannot run. */
export const CRASH_LIMIT = 5;
const CRASH_WINDOW_MS = 60_000;

/** Wait before forking again after the `n`th crash of the window: 100 ms, doubling, at most 5 s. */
export function restartDelayMs(crashes: number): number {
  return Math.min(5000, 100 * 2 ** Math.max(0, crashes - 1));
}

export interface PrimaryOptions {
  /** Appended to the "listening" line. */
  note?: string;
  /** Runs after every worker stopped, before the process exits. */
  onStopped?: () => void;
}

/** The worker's entry point: src/server.ts run as a script, which serves as one worker when forked. */
const WORKER_SCRIPT = fileURLToPath(new URL('../server.ts', import.meta.url));

export function runPrimary(config: Readonly<Config>, esUrl: string, options: PrimaryOptions = {}): void {
  const log = (line: string) => console.error(`gateway primary: ${line}`);
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  cluster.setupPrimary({ exec: WORKER_SCRIPT, args: [] });
  new RateLimiterClusterMaster();
  serveClusterMetrics();
  serveClusterHolds();

  const indexOf = new Map<Worker, number>();
  const crashes: number[] = [];
  let listening = 0;
  let stopping = false;
  let failed = false;

  const fork = (index: number) => indexOf.set(cluster.fork({ ES_URL: esUrl, WORKER_INDEX: String(index) }), index);
  const finish = (code: number) => {
    options.onStopped?.();
    process.exit(code);
  };
  const stopAll = (signal: NodeJS.Signals) => {
    for (const worker of indexOf.keys()) worker.process.kill(signal);
    // A worker that cannot stop within its own deadline is killed: the primary never hangs.
    setTimeout(() => {
      for (const worker of indexOf.keys()) worker.process.kill('SIGKILL');
    }, config.shutdownTimeoutMs + 5000).unref();
  };

  cluster.on('message', (_worker, message: unknown) => {
    if (!isGatewayMessage(message)) return;
    if (message.type === 'listen-error') {
      // The port is taken or refused: every worker would fail alike, so the gateway stops.
      console.error(message.message);
      failed = true;
      stopping = true;
      stopAll('SIGTERM');
      return;
    }
    if (message.type !== 'listening') return;
    listening += 1;
    // Only once every worker listens: whoever waits for this line may send requests at once.
    if (listening === config.workers) console.log(`registry gateway listening on ${message.url}/v1 (${config.workers} workers)${options.note ? ` ${options.note}` : ''}`);
  });

  cluster.on('exit', (worker, code, signal) => {
    const index = indexOf.get(worker)!;
    indexOf.delete(worker);
    if (stopping) {
      if (code !== 0) failed = true;
      if (indexOf.size === 0) finish(failed ? 1 : 0);
      return;
    }
    const now = Date.now();
    crashes.push(now);
    while (crashes[0]! < now - CRASH_WINDOW_MS) crashes.shift();
    log(`worker ${index} exited (${signal ?? `code ${code}`}); ${crashes.length} crash(es) in the last minute`);
    if (crashes.length >= CRASH_LIMIT) {
      log(`workers are crash-looping (${CRASH_LIMIT} crashes within ${CRASH_WINDOW_MS / 1000} s): stopping`);
      stopping = true;
      failed = true;
      if (indexOf.size === 0) finish(1);
      stopAll('SIGTERM');
      return;
    }
    setTimeout(() => {
      if (!stopping) fork(index);
    }, restartDelayMs(crashes.length));
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) {
        // A second signal: no more waiting.
        stopAll('SIGKILL');
        finish(1);
      }
      stopping = true;
      log(`${signal}: stopping ${indexOf.size} workers (each finishes what is in flight)`);
      if (indexOf.size === 0) finish(0);
      stopAll('SIGTERM');
    });
  }

  for (let index = 0; index < config.workers; index += 1) fork(index);
}
