/**
 * Steady read load on the gateway, for `npm run cluster` and its integration test: a few
 * workers, each paced to its share of a target rate, cycle through a list of paths and record
 * every request (start, latency, status, outcome), so the caller can cut the run into phases
 * afterwards (before / during / after a node is killed).
 *
 * Plain fetch loops rather than autocannon: phases need each request's own start time, and a
 * check can judge the body. Not a benchmark: the rate is capped so the machine is not saturated
 * (speed belongs in bench/).
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface Sample {
  /** `performance.now()` when the request was sent. */
  at: number;
  ms: number;
  path: string;
  /** HTTP status, or 0 when no answer came (connection error, 30 s timeout). */
  status: number;
  ok: boolean;
  /** What `note` kept of the answer. */
  note?: string;
}

export interface ReadLoadOptions {
  /** Requests per second across all workers (an upper bound: a slow answer delays its worker). */
  rate: number;
  workers?: number;
  /** Judges a 200 answer by its body; `false` counts it as failed. Default: every 200 is fine. */
  check?: (path: string, body: string) => boolean;
  /** Keeps something of each answer, e.g. the cluster status `/v1/ready` reported. */
  note?: (path: string, status: number, body: string) => string | undefined;
}

export interface ReadLoad {
  readonly samples: readonly Sample[];
  /** Lets every in-flight request finish, then resolves. */
  stop(): Promise<void>;
}

export function startReadLoad(baseUrl: string, paths: readonly string[], options: ReadLoadOptions): ReadLoad {
  const { rate, workers = 4, check = () => true, note } = options;
  const intervalMs = (1000 * workers) / rate;
  const samples: Sample[] = [];
  let running = true;
  let next = 0;
  const worker = async () => {
    while (running) {
      const path = paths[next++ % paths.length]!;
      const at = performance.now();
      let status = 0;
      let body = '';
      try {
        const response = await fetch(`${baseUrl}${path}`, { signal: AbortSignal.timeout(30_000) });
        body = await response.text();
        status = response.status;
      } catch (error) {
        body = (error as Error).message;
      }
      const ms = performance.now() - at;
      samples.push({ at, ms, path, status, ok: status === 200 && check(path, body), note: note?.(path, status, body) });
      await sleep(Math.max(0, intervalMs - ms));
    }
  };
  const done = Promise.all(Array.from({ length: workers }, worker));
  return {
    samples,
    async stop() {
      running = false;
      await done;
    },
  };
}

export interface PhaseSummary {
  seconds: number;
  requests: number;
  failures: number;
  /** Failed requests by status (`0` = no answer), for the report. */
  failedStatuses: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Distinct notes and how often each was kept. */
  notes: Record<string, number>;
}

/** Summarises the samples sent in [from, to) (`performance.now()` instants). */
export function summarize(samples: readonly Sample[], from: number, to: number): PhaseSummary {
  const phase = samples.filter((s) => s.at >= from && s.at < to);
  const latencies = phase.map((s) => s.ms).sort((a, b) => a - b);
  const failedStatuses: Record<string, number> = {};
  const notes: Record<string, number> = {};
  for (const sample of phase) {
    if (!sample.ok) failedStatuses[sample.status] = (failedStatuses[sample.status] ?? 0) + 1;
    if (sample.note !== undefined) notes[sample.note] = (notes[sample.note] ?? 0) + 1;
  }
  return {
    seconds: round((to - from) / 1000),
    requests: phase.length,
    failures: phase.filter((s) => !s.ok).length,
    failedStatuses,
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    maxMs: round(latencies.at(-1) ?? 0),
    notes,
  };
}

/** Nearest-rank percentile of ascending values (0 when there are none). */
export function percentile(sorted: readonly number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
