/**
 * The rehearsal's checker (issue 47), pure: the history of a run in, the broken invariants out,
 * each named with the fault that preceded it. What is expected comes from the bundle files of
 * every publication (the caller reads them); what happened comes from the history.
 */

/** One line of the history: a fault, a publication, an answer, a row delivered, a sample. */
export type Entry =
  | { at: number; kind: 'fault'; fault: string; target: string; until?: number }
  | { at: number; kind: 'skipped'; fault: string; why: string }
  | { at: number; kind: 'publication'; index: number; bundleId: string }
  | { at: number; kind: 'rollback'; from: string; to: string }
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
    }
  | { at: number; kind: 'rows'; client: string; ids: string[] }
  | { at: number; kind: 'rss'; process: string; mb: number };

export interface Expected {
  /** By bundle id: the distinct ids of each row file the generation must hold. */
  counts: Map<string, Record<string, number>>;
  /** The last publication's bundle id: where the follower must end. */
  lastBundle: string;
  /** Event ids that became visible after the walkers and streams started: the publication that first held each, and its kind. */
  newEvents: Map<string, { publication: number; kind: string }>;
  /** Clients that follow one kind of event only (`kind=`). */
  kinds?: Record<string, string>;
  /** The per-client budget the gateways share (`RATE_LIMIT`), and the client that spends past it on both. */
  budget?: { client: string; points: number; windowMs: number; cost: number };
}

export interface Violation {
  invariant: string;
  detail: string;
  at: number;
  /** The fault in progress or last begun before it, if any. */
  after?: string;
}

/**
 * Statuses every answer may have: a refusal must say when to come back. A connection may be
 * refused at accept (its gateway down or restarting) — ECONNREFUSED, or, while its gateway
 * stops, ECONNRESET before any answer on a new connection: one the kernel had completed in the
 * listening socket's queue when the socket closed, never accepted (shutdown.test shows that every
 * connection a stopping gateway accepted is answered). So is an idle keep-alive connection closed
 * as a gateway stops, the GET sent again (RFC 9112 §9.3.1). A request dropped after it was taken is not.
 */
function allowedAnswer(entry: Answer, stopping: (gateway: number, at: number) => boolean): string | undefined {
  if (entry.error !== undefined) {
    if (/ECONNREFUSED|closed while idle/.test(entry.error)) return undefined;
    if (entry.error === 'ECONNRESET' && entry.fresh && entry.gateway !== undefined && stopping(entry.gateway, entry.at)) return undefined;
    return `connection lost: ${entry.error}`;
  }
  if ([200, 206, 304, 404, 410].includes(entry.status)) return undefined;
  if ((entry.status === 429 || entry.status === 503) && entry.retryAfter) return undefined;
  return `status ${entry.status}${entry.retryAfter ? '' : ' without Retry-After'}`;
}

type Answer = Extract<Entry, { kind: 'answer' }>;
type Fault = Extract<Entry, { kind: 'fault' }>;

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
function degraded(faults: readonly Fault[], at: number, client: string): boolean {
  return faults.some((e) => e.at <= at + 2000 && (e.until ?? e.at) + 5000 >= at && (e.fault === 'es-kill' || e.fault === 'gateway-term' || e.fault === 'worker-kill' || (e.fault === 'redis-stop' && client === 'polite')));
}

export function check(history: readonly Entry[], expected: Expected): Violation[] {
  const violations: Violation[] = [];
  // Every question about faults asks the faults alone: an hour's history holds some 10^5 answers
  // and a few hundred faults (asking the whole history per answer took the checker past an hour).
  const faults = history.filter((e): e is Fault => e.kind === 'fault');
  const violate = (invariant: string, detail: string, at: number) => violations.push({ invariant, detail, at, after: faultBefore(faults, at) });
  const rolledBack = history.some((e) => e.kind === 'rollback');

  // A gateway stops from its SIGTERM until it is started again (the fault's span).
  const stopping = (gateway: number, at: number) => faults.some((e) => e.fault === 'gateway-term' && e.target === `gateway-${gateway}` && e.at <= at && at <= (e.until ?? e.at));
  for (const entry of history) {
    if (entry.kind !== 'answer') continue;
    const wrong = allowedAnswer(entry, stopping);
    if (wrong) violate('every answer is 200/304, 429 or 503 with Retry-After, or refused at accept', `${entry.client} ${entry.path}: ${wrong}`, entry.at);
    else if (entry.client === 'polite' && entry.status !== 200 && entry.status !== 304 && !degraded(faults, entry.at, entry.client)) {
      violate('a polite client under its budget gets only 200s while every node is up', `${entry.path}: ${entry.error ?? entry.status}`, entry.at);
    }
  }

  // Every generation that went live holds exactly its bundle's rows.
  for (const entry of history) {
    if (entry.kind !== 'live') continue;
    const want = expected.counts.get(entry.bundleId);
    if (!want) continue;
    for (const [index, rows] of Object.entries(want)) {
      if (entry.counts[index] !== rows) violate('every generation that went live holds exactly its bundle', `${entry.generation} ${index}: ${entry.counts[index]} documents for ${rows} rows`, entry.at);
    }
  }
  const lastLive = history.filter((e): e is Extract<Entry, { kind: 'live' }> => e.kind === 'live').at(-1);
  if (lastLive?.bundleId !== expected.lastBundle) violate('the follower ends on the last publication', `live: ${lastLive?.bundleId ?? 'nothing'}, last published: ${expected.lastBundle}`, lastLive?.at ?? 0);

  // Every stream and walker: each new row once (at least once around the rollback), in the order rows became visible.
  const clients = new Set(history.filter((e) => e.kind === 'rows').map((e) => (e as { client: string }).client));
  for (const client of clients) {
    const rows = history.filter((e): e is Extract<Entry, { kind: 'rows' }> => e.kind === 'rows' && e.client === client);
    const kind = expected.kinds?.[client];
    const wanted = new Map([...expected.newEvents].filter(([, e]) => kind === undefined || e.kind === kind).map(([id, e]) => [id, e.publication]));
    const seen = new Map<string, number>();
    let lastPublication = -1;
    for (const { ids, at } of rows) {
      for (const id of ids) {
        seen.set(id, (seen.get(id) ?? 0) + 1);
        const publication = wanted.get(id);
        if (publication === undefined) continue;
        if (publication < lastPublication && !rolledBack) violate('rows come in the order they became visible', `${client}: ${id} (publication ${publication}) after a row of publication ${lastPublication}`, at);
        lastPublication = Math.max(lastPublication, publication);
      }
    }
    const missing = [...wanted.keys()].filter((id) => !seen.has(id));
    if (missing.length) violate('every stream and walker receives every row that went live', `${client}: ${missing.length} of ${wanted.size} missing (${missing.slice(0, 3).join(', ')})`, rows.at(-1)?.at ?? 0);
    const twice = [...seen].filter(([, n]) => n > 1).map(([id]) => id);
    if (twice.length && !rolledBack) violate('no row is delivered twice', `${client}: ${twice.length} rows twice (${twice.slice(0, 3).join(', ')})`, rows.at(-1)?.at ?? 0);
  }

  // A client's budget holds across both gateways: with the budget in Redis, what it got in any
  // window's span is at most two windows' points (a span straddles two fixed windows); while Redis
  // was stopped each gateway keeps budgets itself (documented), so those spans are left out.
  if (expected.budget) {
    const { client, points, windowMs, cost } = expected.budget;
    const most = Math.floor((2 * points) / cost);
    const redisDown = (at: number) => faults.some((e) => e.fault === 'redis-stop' && e.at - windowMs <= at && (e.until ?? e.at) + 2 * windowMs >= at);
    const granted = history.filter((e): e is Answer => e.kind === 'answer' && e.client === client && e.status === 200).map((e) => e.at);
    let worst = { count: 0, at: 0 };
    for (let i = 0, j = 0; i < granted.length; i += 1) {
      while (granted[j]! <= granted[i]! - windowMs) j += 1;
      if (!redisDown(granted[i]!) && i - j + 1 > worst.count) worst = { count: i - j + 1, at: granted[i]! };
    }
    if (worst.count > most) violate("a client's budget holds across both gateways", `${client}: ${worst.count} answers in ${windowMs} ms, at most ${most}`, worst.at);
  }

  // RSS flat: the last sample of each process within 50 % and 64 MB of its first after warm-up.
  const byProcess = new Map<string, number[]>();
  for (const entry of history) if (entry.kind === 'rss') byProcess.set(entry.process, [...(byProcess.get(entry.process) ?? []), entry.mb]);
  for (const [name, samples] of byProcess) {
    if (samples.length < 4) continue;
    const base = samples[1]!;
    const end = samples.at(-1)!;
    if (end > base * 1.5 + 64) violate('memory of every gateway worker and of the follower stays flat', `${name}: ${base} MB → ${end} MB`, 0);
  }
  return violations;
}
