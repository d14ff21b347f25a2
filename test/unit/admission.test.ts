/**
 * Admission control: at most N calls at once; one client has at most a quarter of the slots in
 * flight, and only its requests past that share wait (in half the queue at most), for its own
 * slots; any other request that finds no free slot, and anything past the queue or the longest
 * wait, gets an immediate 503 `overloaded` with Retry-After, without calling. A queue that
 * stands (not drained for STANDING_MS) serves the newest first and lets a newcomer take the
 * place of a waiter that has waited its turn.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.ts';
import { STANDING_MS, UNADMITTED, createAdmission, ticketOf } from '../../src/limits/admission.ts';

/** A call that finishes when the test says so. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, call: () => opened.then(() => 'done') };
}

/** Runs `call` through `admission` as `client`. */
const as = <T>(admission: ReturnType<typeof createAdmission>, client: string, call: () => Promise<T>) => admission.run(call, ticketOf(client));

describe('admission', () => {
  it('runs up to maxInFlight at once, queues a request behind its own client\'s, refuses any other at once', async () => {
    // Two slots: a client's share is one.
    const admission = createAdmission({ maxInFlight: 2, queue: 1, queueMs: 10_000 });
    const gates = [gate(), gate(), gate()];
    const started: number[] = [];
    const runs = gates.map((g, i) => as(admission, i === 2 ? 'client-0' : `client-${i}`, () => (started.push(i), g.call())));
    expect(started).toEqual([0, 1]);
    expect(admission.stats()).toEqual({ inFlight: 2, queued: 1, refused: 0 });

    // A client with nothing in flight meets other clients' requests in every slot: refused, not queued.
    let called = false;
    const refused = await as(admission, 'client-3', async () => (called = true)).catch((error) => error);
    expect(called).toBe(false);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 503, code: 'overloaded', headers: { 'Retry-After': '1' } });
    // Past the queue: refused too.
    expect(await as(admission, 'client-1', async () => 'never').catch((error: ApiError) => error.code)).toBe('overloaded');
    expect(admission.stats()).toEqual({ inFlight: 2, queued: 1, refused: 2 });

    // Another client's slot frees: the waiter still waits for its own client's.
    gates[1]!.open();
    await runs[1];
    expect(started).toEqual([0, 1]);
    gates[0]!.open();
    await runs[0];
    expect(started).toEqual([0, 1, 2]);
    gates[2]!.open();
    expect(await Promise.all(runs)).toEqual(['done', 'done', 'done']);
    expect(admission.stats()).toEqual({ inFlight: 0, queued: 0, refused: 2 });
  });

  it('refuses a queued call that waited queueMs, and frees its place', async () => {
    const admission = createAdmission({ maxInFlight: 1, queue: 1, queueMs: 30 });
    const busy = gate();
    const first = admission.run(busy.call, ticketOf('a'));
    let called = false;
    const waited = admission.run(async () => (called = true), ticketOf('a')).catch((error: ApiError) => error.code);
    expect(await waited).toBe('overloaded');
    expect(called).toBe(false);
    expect(admission.stats().queued).toBe(0);
    busy.open();
    await first;
    expect(await admission.run(async () => 'next', ticketOf('a'))).toBe('next');
  });

  it('releases the slot of a call that fails', async () => {
    const admission = createAdmission({ maxInFlight: 1, queue: 0, queueMs: 10 });
    await expect(admission.run(() => Promise.reject(new Error('es said no')), ticketOf('a'))).rejects.toThrow('es said no');
    expect(await admission.run(async () => 'ok', ticketOf('a'))).toBe('ok');
  });

  it('gives one client a quarter of the slots and half the queue, and leaves the other slots to others', async () => {
    const admission = createAdmission({ maxInFlight: 8, queue: 4, queueMs: 10_000 });
    const order: string[] = [];
    const gates = Array.from({ length: 8 }, gate);
    const track = (name: string, g: ReturnType<typeof gate>) => () => (order.push(name), g.call());
    // Greedy runs two (a quarter of 8 slots) and queues two (half the queue), not more.
    const greedy = [0, 1, 2, 3].map((i) => as(admission, 'greedy', track(`greedy-${i}`, gates[i]!)));
    const over = await as(admission, 'greedy', async () => 'never').catch((error: ApiError) => error.code);
    expect(over).toBe('overloaded');
    expect(admission.stats()).toEqual({ inFlight: 2, queued: 2, refused: 1 });
    // Others still find free slots at once.
    const polite = as(admission, 'polite', track('polite', gates[4]!));
    expect(order).toEqual(['greedy-0', 'greedy-1', 'polite']);
    gates[0]!.open();
    await greedy[0];
    expect(order).toEqual(['greedy-0', 'greedy-1', 'polite', 'greedy-2']);
    for (const g of gates) g.open();
    expect(await Promise.all([...greedy, polite])).toEqual(['done', 'done', 'done', 'done', 'done']);
    expect(order).toEqual(['greedy-0', 'greedy-1', 'polite', 'greedy-2', 'greedy-3']);
    expect(admission.stats()).toEqual({ inFlight: 0, queued: 0, refused: 1 });
  });

  it('hands a freed slot to a waiter of its own client; a slot another client frees goes to whoever asks next', async () => {
    const admission = createAdmission({ maxInFlight: 8, queue: 8, queueMs: 10_000 });
    const gates = new Map<string, ReturnType<typeof gate>>();
    const order: string[] = [];
    const run = (client: string, name: string) => {
      const g = gate();
      gates.set(name, g);
      return as(admission, client, () => (order.push(name), g.call()));
    };
    const runs = [run('g', 'g1'), run('g', 'g2'), run('x', 'x1'), run('x', 'x2'), run('y', 'y1'), run('y', 'y2'), run('q', 'q1'), run('w', 'w1')];
    // Full. `q` has one request in flight, under its share of two: refused. `g` and `x` have their share: they wait.
    expect(await run('q', 'q2').catch((error: ApiError) => error.code)).toBe('overloaded');
    runs.push(run('g', 'g3'), run('x', 'x3'));
    expect(admission.stats()).toMatchObject({ inFlight: 8, queued: 2, refused: 1 });
    // `y` frees a slot: neither waiter may take it (each client still has its share), a newcomer does.
    gates.get('y1')!.open();
    await runs[4];
    expect(order.slice(8)).toEqual([]);
    runs.push(run('p', 'p1'));
    expect(order.slice(8)).toEqual(['p1']);
    // `x` frees one: its own waiter starts.
    gates.get('x1')!.open();
    await runs[2];
    expect(order.slice(8)).toEqual(['p1', 'x3']);
    gates.get('g2')!.open();
    await runs[1];
    expect(order.slice(8)).toEqual(['p1', 'x3', 'g3']);
    for (const g of gates.values()) g.open();
    await Promise.all(runs);
    expect(admission.stats()).toEqual({ inFlight: 0, queued: 0, refused: 1 });
  });

  it('says whether a client would be refused now, so that the HTTP layer refuses before any work', async () => {
    // Two slots (a share of one each), a queue of two (one each).
    const admission = createAdmission({ maxInFlight: 2, queue: 2, queueMs: 10_000 });
    expect(admission.full('a')).toBe(false);
    const busyA = gate();
    const busyB = gate();
    const first = admission.run(busyA.call, ticketOf('a'));
    expect(admission.full('a')).toBe(false);
    const second = admission.run(busyB.call, ticketOf('b'));
    // Every slot taken: `c` has nothing in flight and is refused; `a` and `b` may wait behind their own.
    expect(admission.full('c')).toBe(true);
    expect(admission.full('a')).toBe(false);
    expect(admission.stats().refused).toBe(1);
    // Saturated only once nobody may wait: then whoever asks is refused. Asking counts nothing.
    expect(admission.saturated()).toBe(false);
    const queuedA = admission.run(async () => 'queued a', ticketOf('a'));
    expect(admission.full('a')).toBe(true);
    expect(admission.saturated()).toBe(false);
    const queuedB = admission.run(async () => 'queued b', ticketOf('b'));
    expect(admission.saturated()).toBe(true);
    expect(admission.full('b')).toBe(true);
    expect(admission.stats().refused).toBe(3);
    busyA.open();
    busyB.open();
    expect(await Promise.all([first, second, queuedA, queuedB])).toEqual(['done', 'done', 'queued a', 'queued b']);
    expect(admission.saturated()).toBe(false);
    expect(admission.full('c')).toBe(false);
  });

  it('is saturated while every slot is taken by clients under their share: nobody may wait', async () => {
    const admission = createAdmission({ maxInFlight: 8, queue: 8, queueMs: 10_000 });
    const gates = Array.from({ length: 8 }, gate);
    const runs = gates.map((g, i) => admission.run(g.call, ticketOf(`client-${i}`)));
    expect(admission.saturated()).toBe(true);
    gates[0]!.open();
    await runs[0];
    expect(admission.saturated()).toBe(false);
    for (const g of gates) g.open();
    await Promise.all(runs);
  });

  it('never refuses a request halfway: once one of its reads was admitted, its next ones run at once', async () => {
    const admission = createAdmission({ maxInFlight: 1, queue: 0, queueMs: 10 });
    const busy = gate();
    const between = gate();
    const steps: string[] = [];
    // One request of client a: one ticket for both its reads.
    const ticket = ticketOf('a');
    const request = (async () => {
      steps.push(await admission.run(async () => 'aggregation', ticket));
      await between.call();
      // The slot is taken by another client now; the labels of the facet still run.
      steps.push(await admission.run(async () => 'labels', ticket));
    })();
    await new Promise((resolve) => setImmediate(resolve));
    const other = admission.run(busy.call, ticketOf('b'));
    between.open();
    await request;
    expect(steps).toEqual(['aggregation', 'labels']);
    expect(await admission.run(async () => 'c', ticketOf('c')).catch((error: ApiError) => error.code)).toBe('overloaded');
    busy.open();
    await other;
  });

  it('runs probes at once, outside the count, even when full', async () => {
    const admission = createAdmission({ maxInFlight: 1, queue: 0, queueMs: 10 });
    const busy = gate();
    const first = admission.run(busy.call, ticketOf('a'));
    expect(await admission.run(async () => 'probe', UNADMITTED)).toBe('probe');
    expect(admission.stats()).toEqual({ inFlight: 1, queued: 0, refused: 0 });
    busy.open();
    await first;
  });

  describe('a standing queue', () => {
    /** One slot on a clock the test moves, held by `busy`, whose further requests wait. */
    function onClock(queue: number, standingWaitMs: number, adaptive = true) {
      let t = 0;
      const admission = createAdmission({ maxInFlight: 1, queue, queueMs: 60_000, standingWaitMs, adaptive, now: () => t });
      const started: string[] = [];
      const busy = gate();
      const first = as(admission, 'busy', busy.call);
      const wait = (name: string) => as(admission, 'busy', async () => (started.push(name), name));
      return { admission, started, busy, first, wait, at: (ms: number) => (t = ms) };
    }

    it('serves in arrival order until the queue has stood STANDING_MS, the newest first after', async () => {
      const burst = onClock(6, 20);
      const b = [burst.wait('b1'), burst.wait('b2'), burst.wait('b3')];
      burst.at(STANDING_MS - 1);
      burst.busy.open();
      expect(await Promise.all(b)).toEqual(['b1', 'b2', 'b3']);
      expect(burst.started).toEqual(['b1', 'b2', 'b3']);

      const standing = onClock(6, 20);
      const s = [standing.wait('s1'), standing.wait('s2'), standing.wait('s3')];
      standing.at(STANDING_MS);
      standing.busy.open();
      await Promise.all(s);
      expect(standing.started).toEqual(['s3', 's2', 's1']);
    });

    it('stays in arrival order when it is not adaptive', async () => {
      const { started, busy, first, wait, at } = onClock(4, 0, false);
      const waiters = [wait('a'), wait('b')];
      at(10 * STANDING_MS);
      busy.open();
      await Promise.all([first, ...waiters]);
      expect(started).toEqual(['a', 'b']);
    });

    it('lets a newcomer take the place of the oldest waiter once the queue stands and that one waited standingWaitMs', async () => {
      let t = 0;
      // Three slots, a share of one each; a queue of two, one place each.
      const admission = createAdmission({ maxInFlight: 3, queue: 2, queueMs: 60_000, standingWaitMs: 200, now: () => t });
      const started: string[] = [];
      const gates = ['a', 'b', 'c'].map((client) => ({ client, gate: gate() }));
      const running = gates.map(({ client, gate: g }) => as(admission, client, g.call));
      const wait = (client: string, name: string) => as(admission, client, async () => (started.push(name), name));
      const oldest = wait('a', 'a2').catch((error: ApiError) => error.code);
      t = 50;
      const second = wait('b', 'b2');
      // Full, not standing yet: the newcomer is refused, before any work (saturated).
      expect(admission.saturated()).toBe(true);
      expect(await wait('c', 'c2').catch((error: ApiError) => error.code)).toBe('overloaded');
      // Standing, but the oldest has waited less than 200 ms: still refused.
      t = STANDING_MS + 50;
      expect(admission.saturated()).toBe(true);
      expect(admission.full('c')).toBe(true);
      // The oldest has waited its turn: the newcomer takes its place, and it is refused.
      t = 200;
      expect(admission.saturated()).toBe(false);
      expect(admission.full('c')).toBe(false);
      const newcomer = wait('c', 'c3');
      expect(await oldest).toBe('overloaded');
      expect(admission.stats()).toEqual({ inFlight: 3, queued: 2, refused: 3 });
      for (const { gate: g } of gates) g.open();
      await Promise.all([...running, second, newcomer]);
      expect(started).toEqual(['b2', 'c3']);
    });
  });
});
