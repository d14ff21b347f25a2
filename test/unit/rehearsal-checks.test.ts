/**
 * The rehearsal's checker (issue 47), on small histories: each invariant broken once, named with
 * the fault that preceded it; a clean history passes.
 */
import { describe, expect, it } from 'vitest';
import { type Entry, type Expected, check } from '../../scripts/rehearsal-checks.ts';

const expected: Expected = {
  counts: new Map([['b1', { events: 10 }], ['b2', { events: 12 }]]),
  lastBundle: 'b2',
  newEvents: new Map([['e11', { publication: 1, kind: 'a' }], ['e12', { publication: 1, kind: 'b' }]]),
  kinds: { 'stream-b': 'b' },
};

const clean: Entry[] = [
  { at: 0, kind: 'live', generation: 'g1', bundleId: 'b1', counts: { events: 10 } },
  { at: 100, kind: 'answer', client: 'polite', path: '/v1/events', status: 200 },
  { at: 200, kind: 'answer', client: 'greedy', path: '/v1/events', status: 429, retryAfter: '1' },
  { at: 300, kind: 'fault', fault: 'gateway-term', target: 'gateway-0', until: 1500 },
  { at: 400, kind: 'answer', client: 'greedy', path: '/v1/events', status: 0, error: 'ECONNREFUSED' },
  { at: 2000, kind: 'live', generation: 'g2', bundleId: 'b2', counts: { events: 12 } },
  { at: 3000, kind: 'rows', client: 'walker', ids: ['e11', 'e12'] },
];

const broken = (history: Entry[]) => check(history, expected).map((v) => [v.invariant, v.after]);

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
    const rule = 'every answer is 200/304, 429 or 503 with Retry-After, or refused at accept';
    expect(broken(history)).toEqual([
      [rule, 'es-kill node-1 at 5.0 s'],
      [rule, 'es-kill node-1 at 5.0 s'],
      [rule, 'es-kill node-1 at 5.0 s'],
    ]);
  });

  it('takes a reset before any answer on a new connection as refused at accept only while that gateway stops', () => {
    const reset = (at: number, gateway: number, fresh: boolean): Entry => ({ at, kind: 'answer', client: 'greedy', path: '/v1/events', status: 0, error: 'ECONNRESET', gateway, fresh });
    expect(broken([...clean, reset(310, 0, true)])).toEqual([]);
    const rule = 'every answer is 200/304, 429 or 503 with Retry-After, or refused at accept';
    // The other gateway was not stopping; a reused connection had been accepted; after the restart nothing stops.
    expect(broken([...clean, reset(310, 1, true), reset(320, 0, false), reset(1600, 0, true)])).toEqual([
      [rule, 'gateway-term gateway-0 at 0.3 s'],
      [rule, 'gateway-term gateway-0 at 0.3 s'],
      [rule, 'gateway-term gateway-0 at 0.3 s'],
    ]);
  });

  it('holds a polite client to 200s while every node is up, not during a fault', () => {
    const history: Entry[] = [...clean, { at: 900, kind: 'answer', client: 'polite', path: '/v1/events', status: 503, retryAfter: '1' }, { at: 9000, kind: 'answer', client: 'polite', path: '/v1/events', status: 503, retryAfter: '1' }];
    expect(broken(history).map(([rule]) => rule)).toEqual(['a polite client under its budget gets only 200s while every node is up']);
  });

  it('names a generation that holds other counts, and a follower that did not end on the last publication', () => {
    const history: Entry[] = clean.map((e) => (e.kind === 'live' && e.generation === 'g2' ? { ...e, counts: { events: 11 } } : e));
    expect(broken(history).map(([rule]) => rule)).toEqual(['every generation that went live holds exactly its bundle']);
    expect(broken(clean.filter((e) => !(e.kind === 'live' && e.generation === 'g2'))).map(([rule]) => rule)).toEqual(['the follower ends on the last publication']);
  });

  it('names rows missing or twice, and twice is allowed around a rollback', () => {
    const missing: Entry[] = clean.map((e) => (e.kind === 'rows' ? { ...e, ids: ['e11'] } : e));
    expect(broken(missing).map(([rule]) => rule)).toEqual(['every stream and walker receives every row that went live']);
    const twice: Entry[] = [...clean, { at: 4000, kind: 'rows', client: 'walker', ids: ['e12'] }];
    expect(broken(twice).map(([rule]) => rule)).toEqual(['no row is delivered twice']);
    expect(broken([...twice, { at: 3500, kind: 'rollback', from: 'g2', to: 'g1' }])).toEqual([]);
  });

  it('expects of a client following one kind only the rows of that kind', () => {
    expect(broken([...clean, { at: 3100, kind: 'rows', client: 'stream-b', ids: ['e12'] }])).toEqual([]);
    expect(broken([...clean, { at: 3100, kind: 'rows', client: 'stream-b', ids: ['e11'] }]).map(([rule]) => rule)).toEqual(['every stream and walker receives every row that went live']);
  });

  it("names a budget spent twice over across gateways, but not while Redis was stopped", () => {
    const budget = { client: 'greedy', points: 10, windowMs: 2000, cost: 2 };
    const burst = (from: number, n: number): Entry[] => Array.from({ length: n }, (_, i) => ({ at: from + i, kind: 'answer', client: 'greedy', path: '/v1/events', status: 200 }));
    expect(check([...clean, ...burst(10_000, 10)], { ...expected, budget })).toEqual([]);
    expect(check([...clean, ...burst(10_000, 11)], { ...expected, budget }).map((v) => v.invariant)).toEqual(["a client's budget holds across both gateways"]);
    expect(check([...clean, { at: 9000, kind: 'fault', fault: 'redis-stop', target: 'redis', until: 12_000 }, ...burst(10_000, 20)], { ...expected, budget })).toEqual([]);
  });

  it('names memory that grows', () => {
    const samples: Entry[] = [100, 100, 110, 120, 300].map((mb, i) => ({ at: i * 10_000, kind: 'rss', process: 'gateway-0-worker-0', mb }));
    expect(broken([...clean, ...samples]).map(([rule]) => rule)).toEqual(['memory of every gateway worker and of the follower stays flat']);
  });
});
