/**
 * A polite client for the year benchmark: steady requests at `rate` per second over a mix of
 * paths (open loop: a request goes out when due, whatever the others take), on a worker thread of
 * its own so that the bench's own work never delays it. Every answer is kept as a sample with the
 * instant it was sent, so that the run can be cut afterwards into windows — idle, during an
 * update, during a full build — and each window's latency read per path.
 */
import { Agent, request } from 'node:http';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

export interface Sample {
  path: string;
  /** Epoch ms when the request was sent. */
  at: number;
  ms: number;
  status: number;
}

export interface PoliteClient {
  /** Replaces the paths (a deep page's cursor after a swap), by name. */
  setPaths(paths: Record<string, string>): void;
  /** The samples so far (answers still due are left out). */
  snapshot(): Promise<(Sample & { name: string })[]>;
  /** Stops sending, waits for the answers still due, and gives every sample, by the path's name. */
  stop(): Promise<(Sample & { name: string })[]>;
}

interface Setup {
  baseUrl: string;
  paths: Record<string, string>;
  rate: number;
}

export function startPolite(baseUrl: string, paths: Record<string, string>, rate: number): PoliteClient {
  const worker = new Worker(new URL(import.meta.url), { workerData: { baseUrl, paths, rate } satisfies Setup });
  return {
    setPaths: (next) => worker.postMessage({ type: 'paths', paths: next }),
    snapshot: () =>
      new Promise((resolve) => {
        worker.once('message', resolve);
        worker.postMessage({ type: 'snapshot' });
      }),
    stop: () =>
      new Promise((resolve, reject) => {
        worker.once('message', (samples: (Sample & { name: string })[]) => {
          void worker.terminate();
          resolve(samples);
        });
        worker.once('error', reject);
        worker.postMessage({ type: 'stop' });
      }),
  };
}

/** The p50, p99 and count of the samples of each name between two instants (200s only). */
export function windowFigures(samples: readonly (Sample & { name: string })[], from: number, to: number): Record<string, { p50: number; p99: number; count: number; errors: number }> {
  const byName = new Map<string, number[]>();
  const errors = new Map<string, number>();
  for (const s of samples) {
    if (s.at < from || s.at >= to) continue;
    if (s.status !== 200) errors.set(s.name, (errors.get(s.name) ?? 0) + 1);
    else {
      const list = byName.get(s.name) ?? [];
      list.push(s.ms);
      byName.set(s.name, list);
    }
  }
  const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return Object.fromEntries(
    [...new Set([...byName.keys(), ...errors.keys()])].map((name) => {
      const ms = (byName.get(name) ?? []).toSorted((a, b) => a - b);
      return [name, { p50: Math.round(quantile(ms, 0.5) * 10) / 10, p99: Math.round(quantile(ms, 0.99) * 10) / 10, count: ms.length, errors: errors.get(name) ?? 0 }];
    }),
  );
}

if (!isMainThread && (workerData as Setup | undefined)?.rate !== undefined) {
  const setup = workerData as Setup;
  let paths = Object.entries(setup.paths);
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const samples: (Sample & { name: string })[] = [];
  let outstanding = 0;
  let next = 0;
  let stopping = false;
  const send = () => {
    const [name, path] = paths[next++ % paths.length]!;
    const at = Date.now();
    const started = performance.now();
    outstanding += 1;
    const done = (status: number) => {
      samples.push({ name, path, at, ms: performance.now() - started, status });
      outstanding -= 1;
    };
    request(`${setup.baseUrl}${path}`, { agent }, (response) => {
      response.on('data', () => {});
      response.once('end', () => done(response.statusCode ?? 0));
    })
      .once('error', () => done(0))
      .end();
  };
  const gap = 1000 / setup.rate;
  const start = performance.now();
  let sent = 0;
  const tick = () => {
    if (stopping) return;
    // Steady arrivals against the clock: a late timer sends what was due, never a burst after a pause.
    const due = Math.floor((performance.now() - start) / gap);
    if (due > sent) {
      sent = due;
      send();
    }
    setTimeout(tick, Math.max(1, gap - ((performance.now() - start) % gap)));
  };
  tick();
  parentPort!.on('message', (message: { type: 'paths'; paths: Record<string, string> } | { type: 'snapshot' | 'stop' }) => {
    if (message.type === 'paths') {
      paths = Object.entries(message.paths);
      return;
    }
    if (message.type === 'snapshot') {
      parentPort!.postMessage(samples);
      return;
    }
    stopping = true;
    const finish = () => (outstanding === 0 ? parentPort!.postMessage(samples) : setTimeout(finish, 20));
    finish();
  });
}
