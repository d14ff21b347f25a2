/**
 * Open-loop HTTP clients for the overload benchmark: each client sends at its own rate from its
 * own loopback address (127.0.0.0/8 is all this machine, so the gateway sees distinct clients),
 * whatever the answers take — the way independent users arrive, unlike a closed loop
 * (autocannon), which slows down with the server and so can never overload it.
 *
 * Arrivals are a Poisson process per client (exponential gaps, seeded: runs are repeatable), or
 * evenly spaced from a random phase for a `steady` client. Clients that all sent at k / rate
 * arrived together: 150 clients at 12 req/s were bursts of 150 requests every 83 ms, of which
 * admission control can take only its slots and queue — measured, that held the crowd's
 * goodput to 0.41 of capacity while the cores idled.
 *
 * A client keeps at most `maxOutstanding` requests open; a request due while that many are
 * open is not sent and counted as `skipped` (a pile-up shows there). A client that honours
 * `Retry-After` (a well-behaved one) sends nothing for that long after a 429 or 503: requests
 * due meanwhile are counted as `deferred`, and it resumes at its rate (no catch-up burst).
 * Every answer is read whole; a request without an answer after `timeoutMs` counts as a timeout.
 */
import { Agent, request } from 'node:http';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { createRandom } from '../generator/random.ts';
import { percentile } from '../scripts/read-load.ts';

export interface ClientPlan {
  name: string;
  address: string;
  /** Requests per second. */
  rate: number;
  /** Paths, rotated. */
  paths: string[];
  maxOutstanding?: number;
  /** Waits `Retry-After` seconds after a 429 or 503 before sending again. */
  honorRetryAfter?: boolean;
  /** Evenly spaced requests instead of Poisson arrivals. */
  steady?: boolean;
  /** A new connection for every request (`Connection: close`), as a careless script does. */
  freshConnections?: boolean;
  /**
   * Runs on a thread of its own. A client's latency is taken on the event loop that sends its
   * requests; a greedy client on the same loop queues its callbacks ahead of the polite one's
   * (measured: the polite p50 went from 5 to 31 ms beside a fresh-connection greedy client while
   * the gateway kept 0.19 cores busy and the load generator 0.74), so the figure measured the
   * load generator. A real polite client does not share its process with the greedy one.
   */
  ownThread?: boolean;
}

export interface ClientFigures {
  name: string;
  address: string;
  rate: number;
  sent: number;
  skipped: number;
  /** Due while waiting out a `Retry-After`. */
  deferred: number;
  byStatus: Record<string, number>;
  /** 429 and 503 answers without `Retry-After`. */
  refusalsWithoutRetryAfter: number;
  timeouts: number;
  networkErrors: number;
  /** Network errors by code (ECONNRESET …). */
  errorCodes: Record<string, number>;
  /** Latency of 200 answers, ms. */
  ok: { p50: number; p99: number; max: number };
  /** Latency of refusals (429, 503), ms: a refusal should be immediate. */
  refused: { p50: number; p99: number };
}

/** Milliseconds to a tenth, as the figures are reported. */
const tenth = (ms: number) => Math.round(ms * 10) / 10;

interface State {
  plan: ClientPlan;
  agent: Agent;
  /** Seconds from the start at which the next request is due. */
  nextAt: number;
  /** Seconds from one request to the next. */
  gap: () => number;
  outstanding: number;
  sent: number;
  skipped: number;
  deferred: number;
  /** performance.now() before which a client honouring Retry-After sends nothing. */
  pausedUntil: number;
  byStatus: Map<number, number>;
  missingRetryAfter: number;
  timeouts: number;
  /** Network errors by code. */
  errorCodes: Map<string, number>;
  okMs: number[];
  refusedMs: number[];
}

export interface OpenLoopResult {
  clients: ClientFigures[];
  /** Latency of every 200 answer, all clients together, ms. */
  ok: { count: number; p50: number; p99: number };
}

/** What one thread's clients report: their figures, and every 200's latency for the total. */
interface ThreadResult {
  clients: ClientFigures[];
  okMs: number[];
}

/**
 * Runs every client for `seconds` against `baseUrl`, then waits for their open requests. The
 * plans marked `ownThread` run each on a worker thread; all start at the same instant.
 */
export async function runOpenLoop(baseUrl: string, plans: ClientPlan[], seconds: number, timeoutMs = 15_000): Promise<OpenLoopResult> {
  // Time for the workers to load this module before the clients start together.
  const startAt = Date.now() + 500;
  const shared = plans.filter((plan) => !plan.ownThread);
  const runs: { group: ClientPlan[]; run: Promise<ThreadResult> }[] = [
    ...plans.filter((plan) => plan.ownThread).map((plan) => ({ group: [plan], run: onWorker({ baseUrl, plans: [plan], seconds, timeoutMs, startAt }) })),
    ...(shared.length ? [{ group: shared, run: runClients(baseUrl, shared, seconds, timeoutMs, startAt) }] : []),
  ];
  const results = new Map<ClientPlan, ClientFigures>();
  const okMs: number[] = [];
  for (const { group, run } of runs) {
    const result = await run;
    group.forEach((plan, i) => results.set(plan, result.clients[i]!));
    okMs.push(...result.okMs);
  }
  const all = okMs.sort((a, b) => a - b);
  return { clients: plans.map((plan) => results.get(plan)!), ok: { count: all.length, p50: tenth(percentile(all, 50)), p99: tenth(percentile(all, 99)) } };
}

interface WorkerJob {
  baseUrl: string;
  plans: ClientPlan[];
  seconds: number;
  timeoutMs: number;
  startAt: number;
}

function onWorker(job: WorkerJob): Promise<ThreadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { openLoopJob: job } });
    worker.once('message', (result: ThreadResult) => {
      resolve(result);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

if (!isMainThread && workerData?.openLoopJob) {
  const job = workerData.openLoopJob as WorkerJob;
  parentPort!.postMessage(await runClients(job.baseUrl, job.plans, job.seconds, job.timeoutMs, job.startAt));
}

async function runClients(baseUrl: string, plans: ClientPlan[], seconds: number, timeoutMs: number, startAt: number): Promise<ThreadResult> {
  const { hostname, port } = new URL(baseUrl);
  const states: State[] = plans.map((plan, i) => {
    const random = createRandom(i + 1, 'open-loop');
    const gap = plan.steady ? () => 1 / plan.rate : () => -Math.log(1 - random.next()) / plan.rate;
    return {
      plan,
      agent: new Agent({ keepAlive: true, maxSockets: plan.maxOutstanding ?? 256 }),
      nextAt: plan.steady ? random.next() / plan.rate : gap(),
      gap,
      outstanding: 0,
      sent: 0,
      skipped: 0,
      deferred: 0,
      pausedUntil: 0,
      byStatus: new Map(),
      missingRetryAfter: 0,
      timeouts: 0,
      errorCodes: new Map(),
      okMs: [],
      refusedMs: [],
    };
  });
  let open = 0;
  let drained: (() => void) | undefined;

  const send = (state: State) => {
    const path = state.plan.paths[state.sent % state.plan.paths.length]!;
    state.sent += 1;
    state.outstanding += 1;
    open += 1;
    const started = performance.now();
    let finished = false;
    const done = () => {
      if (finished) return;
      finished = true;
      state.outstanding -= 1;
      open -= 1;
      if (open === 0) drained?.();
    };
    const fresh = state.plan.freshConnections === true;
    const req = request({ host: hostname, port, path, agent: fresh ? false : state.agent, localAddress: state.plan.address, headers: fresh ? { connection: 'close' } : {} }, (res) => {
      res.on('data', () => {});
      res.on('end', () => {
        const ms = performance.now() - started;
        const status = res.statusCode ?? 0;
        state.byStatus.set(status, (state.byStatus.get(status) ?? 0) + 1);
        if (status === 200) state.okMs.push(ms);
        if (status === 429 || status === 503) {
          state.refusedMs.push(ms);
          const wait = Number(res.headers['retry-after']);
          if (res.headers['retry-after'] === undefined) state.missingRetryAfter += 1;
          else if (state.plan.honorRetryAfter) state.pausedUntil = Math.max(state.pausedUntil, performance.now() + wait * 1000);
        }
        done();
      });
    });
    req.setTimeout(timeoutMs, () => {
      state.timeouts += 1;
      req.destroy(new Error('timeout'));
    });
    req.on('error', (error) => {
      if (!finished && error.message !== 'timeout') {
        const code = (error as NodeJS.ErrnoException).code ?? error.message;
        state.errorCodes.set(code, (state.errorCodes.get(code) ?? 0) + 1);
      }
      done();
    });
    req.end();
  };

  await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - Date.now())));
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const elapsed = (performance.now() - started) / 1000;
      if (elapsed >= seconds) {
        clearInterval(tick);
        return resolve();
      }
      for (const state of states) {
        const paused = performance.now() < state.pausedUntil;
        for (; state.nextAt <= elapsed; state.nextAt += state.gap()) {
          if (paused) state.deferred += 1;
          else if (state.outstanding >= (state.plan.maxOutstanding ?? 256)) state.skipped += 1;
          else send(state);
        }
      }
    }, 5);
  });
  if (open > 0) await new Promise<void>((resolve) => (drained = resolve));
  for (const state of states) state.agent.destroy();

  const clients = states.map((s) => {
    const ok = s.okMs.sort((a, b) => a - b);
    const refused = s.refusedMs.sort((a, b) => a - b);
    return {
      name: s.plan.name,
      address: s.plan.address,
      rate: s.plan.rate,
      sent: s.sent,
      skipped: s.skipped,
      deferred: s.deferred,
      byStatus: Object.fromEntries([...s.byStatus].sort(([a], [b]) => a - b).map(([k, v]) => [String(k), v])),
      refusalsWithoutRetryAfter: s.missingRetryAfter,
      timeouts: s.timeouts,
      networkErrors: [...s.errorCodes.values()].reduce((n, c) => n + c, 0),
      errorCodes: Object.fromEntries(s.errorCodes),
      ok: { p50: tenth(percentile(ok, 50)), p99: tenth(percentile(ok, 99)), max: Math.round(ok.at(-1) ?? 0) },
      refused: { p50: tenth(percentile(refused, 50)), p99: tenth(percentile(refused, 99)) },
    };
  });
  return { clients, okMs: states.flatMap((s) => s.okMs) };
}
