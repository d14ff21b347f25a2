/**
 * The rehearsal's checker, on small histories: each invariant broken once, named with
 * the fault that preceded it; a clean history passes.
 */
import { describe, expect, it } from 'vitest';
import { type Entry, type Expected, check, gatewaySide } from '../../scripts/rehearsal-checks.ts';

const expected: Expected = {
  counts: new Map([['b1', { events: 10, facts: 5 }], ['b2', { events: 12, facts: 6 }]]),
  lastBundle: 'b2',
  newEvents: new Map([['e11', { publication: 1, kind: 'a' }], ['e12', { publication: 1, kind: 'b' }]]),
  kinds: { 'stream-b': 'b' },
};

const clean: Entry[] = [
  { at: 0, kind: 'publication', index: 0, bundleId: 'b1' },
  { at: 0, kind: 'live', generation: 'g1', bundleId: 'b1', counts: { events: 10, facts: 5 } },
  { at: 100, kind: 'answer', client: 'polite', path: '/v1/events', status: 200 },
  { at: 200, kind: 'answer', client: 'greedy', path: '/v1/events', status: 429, retryAfter: '1' },
  { at: 300, kind: 'fault', fault: 'gateway-term', target: 'gateway-0', until: 1500 },
  { at: 400, kind: 'answer', client: 'greedy', path: '/v1/events', status: 0, error: 'ECONNREFUSED', gateway: 0, sent: 399 },
  { at: 1000, kind: 'publication', index: 1, bundleId: 'b2' },
  { at: 2000, kind: 'live', generation: 'g2', bundleId: 'b2', counts: { events: 12, facts: 6 } },
  { at: 3000, kind: 'rows', client: 'walker', ids: ['e11', 'e12'] },
];

const broken = (history: Entry[], also: Partial<Expected> = {}) => check(history, { ...expected, ...also }).map((v) => [v.invariant, v.after]);
const rules = (history: Entry[], also: Partial<Expected> = {}) => broken(history, also).map(([rule]) => rule);
const ANSWER = 'every answer is 200/304, 429 or 503 with Retry-After, or refused at accept';

describe('the rehearsal checker', () => {
  it('passes a clean history', () => {
    expect(check(clean, expected)).toEqual([]);
  });

  it('names a 500, a 503 without Retry-After and a dropped connection, with the fault before each', () => {
    const history: Entry[] = [
      ...clean,
      { at: 5000, kind: 'fault', fault: 'es-kill', target: 'node-1', until: 9000 },
      { at: 6000, kind: 'answer', client: 'greedy', path: '/v1/events', status: 500 },
      { at: 6100, kind: 'answer', client: 'greedy', path: '/v1/events', status: 503 },
      { at: 6200, kind: 'answer', client: 'greedy', path: '/v1/events', status: 0, error: 'ECONNRESET' },
    ];
    expect(broken(history)).toEqual([
      [ANSWER, 'es-kill node-1 at 5.0 s'],
      [ANSWER, 'es-kill node-1 at 5.0 s'],
      [ANSWER, 'es-kill node-1 at 5.0 s'],
    ]);
  });

  it('takes a reset before any answer on a new connection as refused at accept only while that gateway stops', () => {
    const reset = (at: number, gateway: number, fresh: boolean): Entry => ({ at, kind: 'answer', client: 'greedy', path: '/v1/events', status: 0, error: 'ECONNRESET', gateway, fresh });
    expect(broken([...clean, reset(310, 0, true)])).toEqual([]);
    // The other gateway was not stopping; a reused connection had been accepted; after the restart nothing stops.
    expect(broken([...clean, reset(310, 1, true), reset(320, 0, false), reset(1600, 0, true)])).toEqual([
      [ANSWER, 'gateway-term gateway-0 at 0.3 s'],
      [ANSWER, 'gateway-term gateway-0 at 0.3 s'],
      [ANSWER, 'gateway-term gateway-0 at 0.3 s'],
    ]);
  });

  it('takes a refused connection only while that gateway is down, from its SIGTERM until it listens again', () => {
    const refused = (sent: number, gateway?: number): Entry => ({ at: sent + 1, kind: 'answer', client: 'walker', path: '/v1/events', status: 0, error: 'ECONNREFUSED', gateway, sent });
    // The other gateway, no gateway known, before the SIGTERM, sent after the restart listened.
    expect(rules([...clean, refused(500, 1), refused(600), refused(100, 0), refused(1500, 0)])).toEqual([ANSWER, ANSWER, ANSWER, ANSWER]);
    // Sent just before it listened again, failed just after: refused at accept.
    expect(rules([...clean, refused(1499, 0)])).toEqual([]);
  });

  it('names a gateway that does not start again, and its refusals from then on are that one fault', () => {
    const history: Entry[] = [
      ...clean,
      { at: 5000, kind: 'fault', fault: 'gateway-term', target: 'gateway-1', failed: 'server.ts exited with 1 before listening' },
      { at: 9000, kind: 'answer', client: 'walker', path: '/v1/events', status: 0, error: 'ECONNREFUSED', gateway: 1, sent: 8999 },
    ];
    expect(broken(history)).toEqual([['every process a fault stopped starts again', 'gateway-term gateway-1 at 5.0 s']]);
  });

  it('takes a request sent again after its idle connection closed only where a gateway stops or a worker is killed', () => {
    const again = (at: number, gateway: number): Entry => ({ at, kind: 'answer', client: 'greedy', path: '/v1/events', status: 0, error: 'closed while idle: sent again', gateway, sent: at - 1 });
    const workerKill: Entry = { at: 4000, kind: 'fault', fault: 'worker-kill', target: 'gateway-1 worker 1234', until: 6000 };
    expect(broken([...clean, workerKill, again(310, 0), again(4500, 1)])).toEqual([]);
    // The other gateway; no fault at all.
    expect(rules([...clean, workerKill, again(4500, 0), again(9000, 1)])).toEqual([ANSWER, ANSWER]);
  });

  it('holds a request a gateway read to an answer: only a SIGKILL of the worker that read it excuses its loss', () => {
    const side = gatewaySide([
      'registry gateway listening on http://127.0.0.1:1/v1 (2 workers)',
      JSON.stringify({ level: 20, pid: 1234, msg: 'request read', requestId: 'greedy-1' }),
      JSON.stringify({ level: 20, pid: 1235, msg: 'request read', requestId: 'greedy-2' }),
      JSON.stringify({ level: 20, pid: 1235, msg: 'request read', requestId: 'greedy-3' }),
      JSON.stringify({ level: 30, pid: 1235, msg: 'request', status: 200, requestId: 'greedy-3' }),
      JSON.stringify({ level: 30, pid: 1235, msg: 'request', status: 200, requestId: 'greedy-4', aborted: true }),
      '{not json',
    ]);
    expect(side).toEqual({ read: new Map([['greedy-1', 1234], ['greedy-2', 1235], ['greedy-3', 1235]]), answered: new Set(['greedy-3']) });
    const workerKill: Entry = { at: 4000, kind: 'fault', fault: 'worker-kill', target: 'gateway-1 worker 1234', until: 6000 };
    const lost = (requestId: string, error = 'ECONNRESET'): Entry => ({ at: 4500, kind: 'answer', client: 'greedy', path: '/v1/events', status: 0, error, gateway: 1, sent: 3900, requestId });
    // Read by the worker killed: excused. Read by the other worker of that gateway, answered or not: lost.
    expect(broken([...clean, workerKill, lost('greedy-1')], { gateways: side })).toEqual([]);
    expect(rules([...clean, workerKill, lost('greedy-2'), lost('greedy-3')], { gateways: side })).toEqual([ANSWER, ANSWER]);
    expect(check([...clean, workerKill, lost('greedy-3')], { ...expected, gateways: side })[0]!.detail).toMatch(/read by gateway-1 worker 1235 and answered, but the answer never arrived/);
    // "Closed while idle" (which the worker kill would excuse) when a worker had read it: lost, unless it was the one killed.
    expect(rules([...clean, workerKill, lost('greedy-2', 'closed while idle: sent again')], { gateways: side })).toEqual([ANSWER]);
    expect(rules([...clean, workerKill, lost('greedy-1', 'closed while idle: sent again')], { gateways: side })).toEqual([]);
    // A gateway's SIGTERM excuses a refusal at accept, never a request it read.
    const term: Entry = { at: 3800, kind: 'fault', fault: 'gateway-term', target: 'gateway-1', until: 7000 };
    expect(rules([...clean, term, lost('greedy-2', 'ECONNREFUSED')], { gateways: side })).toEqual([ANSWER]);
    expect(rules([...clean, term, lost('greedy-9', 'ECONNREFUSED')], { gateways: side })).toEqual([]);
  });

  it('holds a polite client to 200s while every node is up, not during a fault', () => {
    const history: Entry[] = [...clean, { at: 900, kind: 'answer', client: 'polite', path: '/v1/events', status: 503, retryAfter: '1' }, { at: 9000, kind: 'answer', client: 'polite', path: '/v1/events', status: 503, retryAfter: '1' }];
    expect(rules(history)).toEqual(['a polite client under its budget gets only 200s while every node is up']);
  });

  it('names a generation that holds other counts in any index its files feed, and a follower that did not end on the last publication', () => {
    const counted = (counts: Record<string, number>) => clean.map((e) => (e.kind === 'live' && e.generation === 'g2' ? { ...e, counts } : e));
    const rule = 'every generation that went live holds exactly its bundle';
    expect(rules(counted({ events: 11, facts: 6 }))).toEqual([rule]);
    expect(rules(counted({ events: 12, facts: 5 }))).toEqual([rule]);
    expect(rules(counted({ events: 12 }))).toEqual([rule]);
    expect(rules(clean.filter((e) => !(e.kind === 'live' && e.generation === 'g2')))).toEqual(['the follower ends on the last publication']);
  });

  it('takes a 504 with Retry-After only while a node or a link is down or cut', () => {
    const timedOut = (at: number, retryAfter?: string): Entry => ({ at, sent: at - 10_000, kind: 'answer', client: 'download', path: '/v1/killmails', status: 504, retryAfter });
    const cut: Entry = { at: 20_000, kind: 'fault', fault: 'partition-node', target: 'rehearsal-2', until: 40_000 };
    expect(rules([...clean, cut, timedOut(35_000, '5')])).toEqual([]);
    expect(rules([...clean, cut, timedOut(35_000)])).toEqual([ANSWER]);
    expect(rules([...clean, cut, timedOut(70_000, '5')])).toEqual([ANSWER]);
    expect(rules([...clean, { ...cut, fault: 'redis-stop', target: 'redis' } as Entry, timedOut(35_000, '5')])).toEqual([ANSWER]);
  });

  it('names a process gone that no fault stopped, and takes those a fault on them stopped', () => {
    const DEATHS = 'no process stops but by a fault';
    const faults: Entry[] = [
      { at: 20_000, kind: 'fault', fault: 'worker-kill', target: 'gateway-1 worker 4242', until: 22_000 },
      { at: 40_000, kind: 'fault', fault: 'gateway-term', target: 'gateway-0', until: 44_000 },
      { at: 60_000, kind: 'fault', fault: 'es-kill-master', target: 'rehearsal-2', until: 70_000 },
    ];
    const gone = (process: string, seen: number, at: number, pid?: number): Entry => ({ at, kind: 'gone', process, pid, seen });
    // Each stopped by a fault on it: a worker by its kill, the workers and the primary of a gateway by its stop, a node by its kill.
    expect(rules([...clean, ...faults, gone('gateway-1 worker', 15_000, 25_000, 4242), gone('gateway-0', 41_000, 51_000, 7), gone('gateway-0 worker', 35_000, 45_000, 8), gone('rehearsal-2', 55_000, 65_000)])).toEqual([]);
    // A worker of the other gateway, the follower, a node that no fault touched, or gone long after its fault.
    expect(rules([...clean, ...faults, gone('gateway-0 worker', 15_000, 25_000, 9)])).toEqual([DEATHS]);
    expect(rules([...clean, ...faults, gone('follower', 30_000, 40_000, 10)])).toEqual([DEATHS]);
    expect(rules([...clean, ...faults, gone('rehearsal-1', 55_000, 65_000)])).toEqual([DEATHS]);
    expect(rules([...clean, ...faults, gone('gateway-1', 80_000, 90_000, 11)])).toEqual([DEATHS]);
  });

  it('names rows missing or twice', () => {
    const missing: Entry[] = clean.map((e) => (e.kind === 'rows' ? { ...e, ids: ['e11'] } : e));
    expect(rules(missing)).toEqual(['every stream and walker receives every row that went live']);
    expect(rules([...clean, { at: 4000, kind: 'rows', client: 'walker', ids: ['e12'] }])).toEqual(['no row is delivered twice']);
  });

  it('expects of a client following one kind only the rows of that kind', () => {
    expect(broken([...clean, { at: 3100, kind: 'rows', client: 'stream-b', ids: ['e12'] }])).toEqual([]);
    expect(rules([...clean, { at: 3100, kind: 'rows', client: 'stream-b', ids: ['e11'] }])).toEqual(['every stream and walker receives every row that went live']);
  });

  describe('around a rollback', () => {
    // Publication 2 goes live and is rolled back to 1; publication 3 (which holds 2's rows) goes live.
    const around: Expected = {
      ...expected,
      counts: new Map(),
      lastBundle: 'b4',
      newEvents: new Map([
        ['a1', { publication: 1, kind: 'a' }],
        ['b1', { publication: 2, kind: 'a' }],
        ['b2', { publication: 2, kind: 'a' }],
        ['c1', { publication: 3, kind: 'a' }],
        ['d1', { publication: 4, kind: 'a' }],
      ]),
      kinds: {},
    };
    const live = (at: number, index: number): Entry[] => [{ at, kind: 'live', generation: `g${index}`, bundleId: `b${index}`, counts: {} }];
    const base: Entry[] = [0, 1, 2, 3, 4].map((index) => ({ at: index * 10, kind: 'publication', index, bundleId: `b${index}` }) as Entry);
    const run = (...rows: string[][]): Entry[] => [
      ...base,
      ...live(100, 0),
      ...live(200, 1),
      { at: 210, kind: 'rows', client: 'stream', ids: rows[0]! },
      ...live(300, 2),
      { at: 310, kind: 'rows', client: 'stream', ids: rows[1]! },
      ...live(400, 1),
      { at: 401, kind: 'rollback', from: 'b2', to: 'b1', exit: 0 },
      ...live(500, 3),
      { at: 510, kind: 'rows', client: 'stream', ids: rows[2]! },
      ...live(600, 4),
      { at: 610, kind: 'rows', client: 'stream', ids: rows[3]! },
    ];
    const check2 = (history: Entry[]) => check(history, around).map((v) => v.invariant);

    it('lets the rows it took back come again, in the order they become visible again', () => {
      expect(check2(run(['a1'], ['b1', 'b2'], ['c1', 'b2', 'b1'], ['d1']))).toEqual([]);
      // A client that met them only once, before or after.
      expect(check2(run(['a1'], ['b1', 'b2'], ['c1'], ['d1']))).toEqual([]);
      expect(check2(run(['a1'], [], ['b2', 'c1', 'b1'], ['d1']))).toEqual([]);
    });

    it('lets them come a third time, from a gateway still on the generation rolled back from, but never out of order', () => {
      expect(check2(run(['a1'], ['b1', 'b2', 'b1', 'b2'], ['c1', 'b2', 'b1'], ['d1']))).toEqual([]);
      expect(check2(run(['a1'], ['b1', 'b2'], ['c1', 'b2', 'b1'], ['d1', 'b1']))).toEqual(['rows come in the order they became visible']);
    });

    it('names any other row twice', () => {
      expect(check2(run(['a1'], ['b1', 'b2'], ['c1', 'b2', 'b1', 'a1'], ['d1']))).toEqual(['no row is delivered twice']);
      expect(check2(run(['a1'], ['b1', 'b2'], ['c1', 'b2', 'b1'], ['d1', 'c1']))).toEqual(['no row is delivered twice']);
      expect(check2(run(['a1'], ['b1', 'b2'], ['c1', 'b2', 'b1'], ['d1', 'd1']))).toEqual(['no row is delivered twice']);
    });

    it('names a row out of order anywhere in the run', () => {
      // Before the rollback: a row of publication 1 after one of 2.
      expect(check2(run([], ['b1', 'a1', 'b2'], ['c1', 'b2', 'b1'], ['d1']))).toEqual(['rows come in the order they became visible']);
      // After the rollback, a row taken back after a row of the next publication but one.
      expect(check2(run(['a1'], ['b1'], ['c1'], ['d1', 'b2']))).toEqual(['rows come in the order they became visible']);
    });

    it('names a generation that went back without a rollback', () => {
      expect(check2(run(['a1'], ['b1', 'b2'], ['c1', 'b2', 'b1'], ['d1']).filter((e) => e.kind !== 'rollback'))).toEqual(['a generation goes back only by a rollback']);
      const failed = run(['a1'], ['b1', 'b2'], ['c1', 'b2', 'b1'], ['d1']).map((e) => (e.kind === 'rollback' ? { ...e, exit: 1 } : e));
      expect(check2(failed)).toEqual(['a generation goes back only by a rollback']);
    });
  });

  describe("a client's budget across both gateways", () => {
    const budget = { client: 'greedy', points: 100, windowMs: 2000, cost: 2 };
    // The greedy client spends its window's 50 answers in 250 ms as the window renews, then is refused until the next.
    const burst = (from: number, gateways: number[]): Entry[] =>
      Array.from({ length: 50 }, (_, i) => ({ at: from + i * 5 + 4, sent: from + i * 5, kind: 'answer', client: 'greedy', path: '/v1/events', status: 200, gateway: gateways[i % gateways.length] }));
    const every = (from: number, n: number, each: (at: number) => Entry[]) => Array.from({ length: n }, (_, k) => each(from + k * 2100)).flat();
    const rule = "a client's budget holds across both gateways";

    it('passes one budget spread over both gateways', () => {
      expect(broken([...clean, ...every(10_000, 20, (at) => burst(at, [0, 1]))], { budget })).toEqual([]);
      // Spent as fast as it renews, at the edges of windows that follow one another at once.
      const edges = Array.from({ length: 20 }, (_, k) => burst(10_000 + k * 2000 + 1750, [0, 1])).flat();
      expect(broken([...clean, ...edges], { budget })).toEqual([]);
    });

    it('names a budget per gateway: each renews on its own and both are spent', () => {
      const separate = [...every(10_000, 20, (at) => burst(at, [0])), ...every(11_000, 20, (at) => burst(at, [1]))];
      expect(rules([...clean, ...separate], { budget })).toEqual([rule]);
      // Even in phase.
      expect(rules([...clean, ...every(10_000, 20, (at) => [...burst(at, [0]), ...burst(at + 2, [1])])], { budget })).toEqual([rule]);
    });

    it('leaves out the spans while Redis was stopped (each gateway keeps budgets itself then)', () => {
      const separate = [...every(10_000, 5, (at) => burst(at, [0])), ...every(11_000, 5, (at) => burst(at, [1]))];
      expect(broken([...clean, { at: 9000, kind: 'fault', fault: 'redis-stop', target: 'redis', until: 20_000 }, ...separate], { budget })).toEqual([]);
    });
  });

  describe('memory', () => {
    const rss = (pid: number, process: string, mbs: number[], from = 0): Entry[] => mbs.map((mb, i) => ({ at: from + i * 10_000, kind: 'rss', process, pid, mb }));
    const rule = 'memory of every gateway worker and of the follower stays flat';

    it('names memory that grows', () => {
      expect(rules([...clean, ...rss(7, 'gateway-0-worker-0', [100, 100, 110, 120, 300])])).toEqual([rule]);
    });

    it('judges each process by its own samples: a leak a restart hides, a young process after an old one', () => {
      // A leaking worker killed and started again in its place: the new one is small.
      expect(rules([...clean, ...rss(7, 'gateway-0-worker-0', [100, 100, 200, 300]), ...rss(8, 'gateway-0-worker-0', [90, 100, 100, 100], 40_000)])).toEqual([rule]);
      // A young process that warms up after an old small one is not a leak.
      expect(rules([...clean, ...rss(7, 'follower', [40, 40, 40, 40]), ...rss(9, 'follower', [40, 150, 160, 160], 40_000)])).toEqual([]);
    });

    it('takes a read of a process gone for no sample', () => {
      expect(rules([...clean, ...rss(7, 'gateway-1-worker-1', [0, 0, 100, 100, 100, 100])])).toEqual([]);
    });
  });
});
