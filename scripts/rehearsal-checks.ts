/**
 * The rehearsal's checker, pure: the history of a run in, the broken invariants out,
 * each named with the fault that preceded it. What is expected comes from the bundle files of
 * every publication (the caller reads them); what happened comes from the history.
 */

/** One line of the history: a fault, a publication, an answer, a row delivered, a sample. */
export type Entry =
  /** `failed`: the fault's process could not be started again (its span then runs to the end). */
  | { at: number; kind: 'fault'; fault: string; target: string; until?: number; failed?: string }
  | { at: number; kind: 'skipped'; fault: string; why: string }
  | { at: number; kind: 'publication'; index: number; bundleId: string }
  /** The live bundle before and after `--rollback`, and its exit code. */
  | { at: number; kind: 'rollback'; from: string; to: string; exit: number | null }
  /** A generation seen live, and the documents counted in each live alias at that moment. */
  | { at: number; kind: 'live'; generation: string; bundleId: string; counts: Record<string, number> }
  | {
      at: number;
      kind: 'answer';
      client: string;
      path: string;
      status: number;
      retryAfter?: string;
      error?: string;
      /** The gateway asked (0 or 1), and whether on a connection of its own (not a reused keep-alive one). */
      gateway?: number;
      fresh?: boolean;
      /** When the request was sent: the gateway decided on it between `sent` and `at`. */
      sent?: number;
      /** The `X-Request-Id` it was sent with: what the gateways' logs name it by. */
      requestId?: string;
    }
  | { at: number; kind: 'rows'; client: string; ids: string[] }
  | { at: number; kind: 'rss'; process: string; pid: number; mb: number }
  /** A process of the run found gone, last seen running at `seen`: a gateway (`gateway-<i>`), one of its workers, the follower, a node. */
  | { at: number; kind: 'gone'; process: string; pid?: number; seen: number };

export interface Expected {
  /** By bundle id: the distinct ids of each row file the generation must hold. */
  counts: Map<string, Record<string, number>>;
  /** The last publication's bundle id: where the follower must end. */
  lastBundle: string;
  /**
   * Event ids that became visible after the walkers and streams started: the publication that
   * first held each (every later publication holds it too), and its kind.
   */
  newEvents: Map<string, { publication: number; kind: string }>;
  /** Clients that follow one kind of event only (`kind=`). */
  kinds?: Record<string, string>;
  /** The per-client budget the gateways share (`RATE_LIMIT`), and the client that spends past it on both. */
  budget?: { client: string; points: number; windowMs: number; cost: number };
  /** What the gateways' own logs say of the requests clients sent (`gatewaySide`). */
  gateways?: GatewaySide;
}

/** Of each request id, what the gateways' logs say: the process that read it, and whether an answer was written whole. */
export interface GatewaySide {
  read: Map<string, number>;
  answered: Set<string>;
}

/**
 * The gateways' side of the run from their logs at `debug` (src/http/middleware/request-log.ts):
 * `request read` as a worker takes a request, `request` once its answer closed (`aborted` when
 * it was not written whole). Lines that are not JSON, or name no request id, are passed by.
 */
export function gatewaySide(lines: Iterable<string>): GatewaySide {
  const side: GatewaySide = { read: new Map(), answered: new Set() };
  for (const line of lines) {
    if (!line.startsWith('{')) continue;
    let entry: { msg?: string; requestId?: unknown; pid?: number; aborted?: boolean };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof entry.requestId !== 'string') continue;
    if (entry.msg === 'request read' && entry.pid !== undefined) side.read.set(entry.requestId, entry.pid);
    else if (entry.msg === 'request' && !entry.aborted) side.answered.add(entry.requestId);
  }
  return side;
}

/** Every invariant the checker holds a run to, by the name a broken one is reported with. */
export const INVARIANTS = {
  restarts: 'every process a fault stopped starts again',
  answers: 'every answer is 200/304, 429 or 503 with Retry-After, or refused at accept',
  polite: 'a polite client under its budget gets only 200s while every node is up',
  counts: 'every generation that went live holds exactly its bundle',
  follower: 'the follower ends on the last publication',
  goesBack: 'a generation goes back only by a rollback',
  order: 'rows come in the order they became visible',
  missing: 'every stream and walker receives every row that went live',
  twice: 'no row is delivered twice',
  budget: "a client's budget holds across both gateways",
  memory: 'memory of every gateway worker and of the follower stays flat',
  deaths: 'no process stops but by a fault',
} as const;

export interface Violation {
  invariant: string;
  detail: string;
  at: number;
  /** The fault in progress or last begun before it, if any. */
  after?: string;
}

type Answer = Extract<Entry, { kind: 'answer' }>;
type Fault = Extract<Entry, { kind: 'fault' }>;
type Live = Extract<Entry, { kind: 'live' }>;

/** Whether `at` falls in a fault of `kind` on `target` (a failed one lasts to the end). */
type During = (kind: string, target: string, at: number) => boolean;

/**
 * Statuses every answer may have: a refusal must say when to come back. A connection may be
 * refused at accept while its gateway is down (from its SIGTERM until it listens again) —
 * ECONNREFUSED, or, while it stops, ECONNRESET before any answer on a new connection: one the
 * kernel had completed in the listening socket's queue when the socket closed, never accepted
 * (shutdown.test shows that every connection a stopping gateway accepted is answered). An idle
 * keep-alive connection closed by its gateway as it stops, or by a worker's death, is sent again
 * (RFC 9112 §9.3.1): that too only then. A request dropped after it was taken is not: where the
 * gateways' logs show a worker read it (`gateways`), its loss is excused only by a SIGKILL of
 * that very worker while it was out, whatever else was going on (a gateway's SIGTERM must
 * answer what it read). A 504
 * (Elasticsearch did not answer in time) with `Retry-After` only while a node or a link is down
 * or cut (`cutOff`): a read that waited on a node cut from the others.
 */
function allowedAnswer(entry: Answer, during: During, cutOff: (at: number) => boolean, side: GatewaySide | undefined, killed: (pid: number, from: number, to: number) => boolean): string | undefined {
  if (entry.error !== undefined) {
    const gateway = `gateway-${entry.gateway ?? '?'}`;
    const reader = entry.requestId === undefined ? undefined : side?.read.get(entry.requestId);
    if (reader !== undefined) {
      if (killed(reader, entry.sent ?? entry.at, entry.at)) return undefined;
      return `${entry.error}: read by ${gateway} worker ${reader} and ${side!.answered.has(entry.requestId!) ? 'answered, but the answer never arrived' : 'never answered'}`;
    }
    const down = during('gateway-term', gateway, entry.at) && during('gateway-term', gateway, entry.sent ?? entry.at);
    if (entry.error === 'ECONNREFUSED' && down) return undefined;
    if (entry.error === 'ECONNRESET' && entry.fresh && down) return undefined;
    if (/closed while idle/.test(entry.error) && (down || during('worker-kill', gateway, entry.at))) return undefined;
    return `connection lost: ${entry.error}${entry.gateway === undefined ? '' : ` (${gateway})`}`;
  }
  if ([200, 206, 304, 404, 410].includes(entry.status)) return undefined;
  if ((entry.status === 429 || entry.status === 503) && entry.retryAfter) return undefined;
  if (entry.status === 504 && entry.retryAfter && cutOff(entry.sent ?? entry.at)) return undefined;
  return `status ${entry.status}${entry.retryAfter ? '' : ' without Retry-After'}`;
}

/** The fault in progress at `at`, else the last one begun before it. */
function faultBefore(faults: readonly Fault[], at: number): string | undefined {
  let last: Fault | undefined;
  for (const fault of faults) {
    if (fault.at > at) continue;
    if (!last || fault.at >= last.at) last = fault;
  }
  return last && `${last.fault} ${last.target} at ${(last.at / 1000).toFixed(1)} s`;
}

/** Whether an Elasticsearch node or the client's gateway was down at `at`. */
/** Faults that leave a node or a gateway's links down or cut: a read may wait on them past its timeout. */
const LINKS_DOWN = new Set(['es-kill', 'es-kill-master', 'partition-node', 'partition-master', 'node-loss', 'gateway-cut']);
/** Faults under which a polite client may be refused: a node or a gateway down, or cut off. */
const DEGRADING = new Set([...LINKS_DOWN, 'gateway-term', 'worker-kill']);

function degraded(faults: readonly Fault[], at: number, client: string): boolean {
  return faults.some((e) => e.at <= at + 2000 && (e.until ?? e.at) + 5000 >= at && (DEGRADING.has(e.fault) || (e.fault === 'redis-stop' && client === 'polite')));
}

/**
 * Where each new row became visible: the publication index of every live generation that made
 * it visible (it was not before). Once, while generations move forward; again after a rollback
 * took it back, at the generation that holds it again.
 */
function visibilities(history: readonly Entry[], newEvents: Expected['newEvents']): Map<string, number[]> {
  const publication = new Map(history.filter((e) => e.kind === 'publication').map((e) => [e.bundleId, e.index]));
  const lives = history.filter((e): e is Live => e.kind === 'live').map((e) => publication.get(e.bundleId) ?? -1);
  const out = new Map<string, number[]>();
  for (const [id, { publication: first }] of newEvents) {
    const ranks: number[] = [];
    let current = -1;
    for (const index of lives) {
      if (current < first && index >= first) ranks.push(index);
      current = index;
    }
    out.set(id, ranks);
  }
  return out;
}

/** The faults that stop a process of the run, by its name: a gateway's workers go with a worker kill or with their gateway. */
function stoppedBy(process: string): { fault: string; target: string }[] {
  const worker = /^(gateway-\d+) worker$/.exec(process);
  if (worker) return [{ fault: 'worker-kill', target: process }, { fault: 'gateway-term', target: worker[1]! }];
  if (/^gateway-\d+$/.test(process)) return [{ fault: 'gateway-term', target: process }];
  if (process === 'follower') return [{ fault: 'follower-kill', target: process }];
  return [{ fault: 'es-kill', target: process }, { fault: 'es-kill-master', target: process }];
}

export function check(history: readonly Entry[], expected: Expected): Violation[] {
  const violations: Violation[] = [];
  // Every question about faults asks the faults alone: an hour's history holds some 10^5 answers
  // and a few hundred faults (asking the whole history per answer took the checker past an hour).
  const faults = history.filter((e): e is Fault => e.kind === 'fault');
  const violate = (invariant: string, detail: string, at: number) => violations.push({ invariant, detail, at, after: faultBefore(faults, at) });
  const during: During = (kind, target, at) => faults.some((e) => e.fault === kind && e.target.startsWith(target) && e.at <= at && at <= (e.failed ? Infinity : (e.until ?? e.at)));
  // The worker `pid` SIGKILLed between `from` and `to` (a second's slack: the fault is recorded as it is aimed).
  const killedWorker = (pid: number, from: number, to: number) => faults.some((f) => f.fault === 'worker-kill' && f.target.endsWith(` worker ${pid}`) && f.at >= from - 1000 && f.at <= to + 1000);

  for (const fault of faults) {
    if (fault.failed) violate(INVARIANTS.restarts, `${fault.fault} ${fault.target}: ${fault.failed}`, fault.at);
  }
  // A process gone is one a fault stopped: a fault on it in progress between when it was last seen
  // running and when it was found gone (a second's slack for the sampler).
  for (const entry of history) {
    if (entry.kind !== 'gone') continue;
    const by = stoppedBy(entry.process);
    const on = (f: Fault) => by.some(({ fault, target }) => f.fault === fault && (f.target === target || f.target.startsWith(`${target} `)));
    const stopped = faults.some((f) => on(f) && f.at <= entry.at && (f.failed ? Infinity : (f.until ?? f.at)) >= entry.seen - 1000);
    if (!stopped) violate(INVARIANTS.deaths, `${entry.process}${entry.pid ? ` (pid ${entry.pid})` : ''}: gone between ${(entry.seen / 1000).toFixed(1)} s and ${(entry.at / 1000).toFixed(1)} s, no fault stopped it`, entry.at);
  }

  for (const entry of history) {
    if (entry.kind !== 'answer') continue;
    const wrong = allowedAnswer(entry, during, (at) => faults.some((f) => LINKS_DOWN.has(f.fault) && f.at <= at + 2000 && (f.until ?? Infinity) + 5000 >= at), expected.gateways, killedWorker);
    if (wrong) violate(INVARIANTS.answers, `${entry.client} ${entry.path}: ${wrong}`, entry.at);
    else if (entry.client === 'polite' && entry.status !== 200 && entry.status !== 304 && !degraded(faults, entry.at, entry.client)) {
      violate(INVARIANTS.polite, `${entry.path}: ${entry.error ?? entry.status}`, entry.at);
    }
  }

  // Every generation that went live holds exactly its bundle's rows, in every index a file feeds.
  for (const entry of history) {
    if (entry.kind !== 'live') continue;
    const want = expected.counts.get(entry.bundleId);
    if (!want) continue;
    for (const [index, rows] of Object.entries(want)) {
      if (entry.counts[index] !== rows) violate(INVARIANTS.counts, `${entry.generation} ${index}: ${entry.counts[index]} documents for ${rows} rows`, entry.at);
    }
  }
  const lives = history.filter((e): e is Live => e.kind === 'live');
  const lastLive = lives.at(-1);
  if (lastLive?.bundleId !== expected.lastBundle) violate(INVARIANTS.follower, `live: ${lastLive?.bundleId ?? 'nothing'}, last published: ${expected.lastBundle}`, lastLive?.at ?? 0);

  // Generations move forward, and back only where a rollback took them.
  const publication = new Map(history.filter((e) => e.kind === 'publication').map((e) => [e.bundleId, e.index]));
  const rollbacks = history.filter((e) => e.kind === 'rollback' && e.exit === 0);
  for (const [i, entry] of lives.entries()) {
    const before = lives[i - 1];
    if (!before || (publication.get(entry.bundleId) ?? -1) >= (publication.get(before.bundleId) ?? -1)) continue;
    if (!rollbacks.some((r) => r.kind === 'rollback' && r.from === before.bundleId && r.to === entry.bundleId)) {
      violate(INVARIANTS.goesBack, `${before.generation} → ${entry.generation}`, entry.at);
    }
  }

  // Every stream and walker: each new row once, in the order rows became visible. A row a
  // rollback took back may come again (at least once, as documented: a gateway still on the
  // generation rolled back from serves it after another moved the client's position back), each
  // time in order with one of its visibilities: a delivery takes the earliest of the row's
  // visibilities not before the last row delivered, and not before its own last one.
  const visible = visibilities(history, expected.newEvents);
  const clients = new Set(history.filter((e) => e.kind === 'rows').map((e) => (e as { client: string }).client));
  for (const client of clients) {
    const rows = history.filter((e): e is Extract<Entry, { kind: 'rows' }> => e.kind === 'rows' && e.client === client);
    const kind = expected.kinds?.[client];
    const wanted = new Set([...expected.newEvents].filter(([, e]) => kind === undefined || e.kind === kind).map(([id]) => id));
    const used = new Map<string, number>();
    const seen = new Set<string>();
    const twice: string[] = [];
    let lastRank = -1;
    for (const { ids, at } of rows) {
      for (const id of ids) {
        const ranks = visible.get(id);
        if (!wanted.has(id)) continue;
        seen.add(id);
        if (!ranks?.length) continue;
        const after = used.get(id) ?? -1;
        const again = ranks.length > 1;
        const next = ranks.findIndex((rank, j) => (j > after || (again && j === after)) && rank >= lastRank);
        if (next >= 0) {
          used.set(id, next);
          lastRank = ranks[next]!;
        } else if (!again && after === 0) twice.push(id);
        else violate(INVARIANTS.order, `${client}: ${id} (visible at publication ${ranks.join(', ')}) after a row of publication ${lastRank}`, at);
      }
    }
    const missing = [...wanted].filter((id) => !seen.has(id));
    if (missing.length) violate(INVARIANTS.missing, `${client}: ${missing.length} of ${wanted.size} missing (${missing.slice(0, 3).join(', ')})`, rows.at(-1)?.at ?? 0);
    if (twice.length) violate(INVARIANTS.twice, `${client}: ${twice.length} rows twice (${twice.slice(0, 3).join(', ')})`, rows.at(-1)?.at ?? 0);
  }

  // One budget across both gateways. Fixed windows start at a spend and never overlap, so any
  // SPAN windows' time meets at most SPAN + 1 windows: the grants the gateways surely decided in
  // it (sent and answered within it) are at most SPAN + 1 windows' points, and one more window's
  // for the insurance (a spend the store did not answer within its timeout is granted from the
  // gateway's own counters). Separate budgets give a client spreading over both gateways about
  // 2 × SPAN windows' points. While Redis was stopped each gateway keeps budgets itself
  // (documented): those spans are left out.
  if (expected.budget) {
    const { client, points, windowMs, cost } = expected.budget;
    const SPAN = 5;
    const most = (SPAN + 2) * Math.floor(points / cost);
    const spanMs = SPAN * windowMs;
    const redisDown = (from: number) => faults.some((e) => e.fault === 'redis-stop' && e.at <= from + spanMs && (e.failed ? Infinity : (e.until ?? e.at)) + 2 * windowMs >= from);
    const granted = history
      .filter((e): e is Answer => e.kind === 'answer' && e.client === client && e.status === 200)
      .map((e) => ({ sent: e.sent ?? e.at, at: e.at }))
      .sort((a, b) => a.sent - b.sent);
    let worst = { count: 0, at: 0 };
    for (let i = 0, j = 0; i < granted.length; i += 1) {
      const from = granted[i]!.sent;
      while (j < granted.length && granted[j]!.sent <= from + spanMs) j += 1;
      let count = 0;
      for (let k = i; k < j; k += 1) if (granted[k]!.at <= from + spanMs) count += 1;
      if (count > worst.count && !redisDown(from)) worst = { count, at: from };
    }
    if (worst.count > most) violate(INVARIANTS.budget, `${client}: ${worst.count} answers in ${spanMs} ms, at most ${most}`, worst.at);
  }

  // RSS flat: each process (by its pid: a restarted one is a new process, with its own warm-up)
  // ends within 50 % and 64 MB of its second sample; a read of a process gone (0) is no sample.
  const byProcess = new Map<string, number[]>();
  for (const entry of history) {
    if (entry.kind !== 'rss' || entry.mb <= 0) continue;
    const key = `${entry.process} (pid ${entry.pid})`;
    byProcess.set(key, [...(byProcess.get(key) ?? []), entry.mb]);
  }
  for (const [name, samples] of byProcess) {
    if (samples.length < 4) continue;
    const base = samples[1]!;
    const end = samples.at(-1)!;
    if (end > base * 1.5 + 64) violate(INVARIANTS.memory, `${name}: ${base} MB → ${end} MB`, 0);
  }
  return violations;
}
