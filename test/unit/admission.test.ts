/**
 * Admission control: at most N calls at once, a bounded queue served in order, and past it (or
 * past the longest wait) an immediate 503 `overloaded` with Retry-After, without calling; while
 * a freed slot goes to the client with the fewest requests in flight, and one client holds at
 * most half the queue.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.ts';
import { UNADMITTED, admissionClient, createAdmission } from '../../src/search/admission.ts';

/** A call that finishes when the test says so. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, call: () => opened.then(() => 'done') };
}

describe('admission', () => {
  it('runs up to maxInFlight at once, queues `queue` more in order, refuses the rest at once', async () => {
    const admission = createAdmission({ maxInFlight: 2, queue: 1, queueMs: 10_000 });
    const gates = [gate(), gate(), gate()];
    const started: number[] = [];
    const runs = gates.map((g, i) => admission.run(() => (started.push(i), g.call())));
    expect(started).toEqual([0, 1]);
    expect(admission.stats()).toEqual({ inFlight: 2, queued: 1, refused: 0 });

    let called = false;
    const refused = await admission.run(async () => (called = true)).catch((error) => error);
    expect(called).toBe(false);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 503, code: 'overloaded', headers: { 'Retry-After': '1' } });

    gates[0]!.open();
    await runs[0];
    expect(started).toEqual([0, 1, 2]);
    gates[1]!.open();
    gates[2]!.open();
    expect(await Promise.all(runs)).toEqual(['done', 'done', 'done']);
    expect(admission.stats()).toEqual({ inFlight: 0, queued: 0, refused: 1 });
  });

  it('refuses a queued call that waited queueMs, and frees its place', async () => {
    const admission = createAdmission({ maxInFlight: 1, queue: 1, queueMs: 30 });
    const busy = gate();
    const first = admission.run(busy.call);
    let called = false;
    const waited = admission.run(async () => (called = true)).catch((error: ApiError) => error.code);
    expect(await waited).toBe('overloaded');
    expect(called).toBe(false);
    expect(admission.stats().queued).toBe(0);
    busy.open();
    await first;
    expect(await admission.run(async () => 'next')).toBe('next');
  });

  it('releases the slot of a call that fails', async () => {
    const admission = createAdmission({ maxInFlight: 1, queue: 0, queueMs: 10 });
    await expect(admission.run(() => Promise.reject(new Error('es said no')))).rejects.toThrow('es said no');
    expect(await admission.run(async () => 'ok')).toBe('ok');
  });

  it('keeps half the queue for others, and gives a freed slot to the client with the fewest in flight', async () => {
    const admission = createAdmission({ maxInFlight: 2, queue: 4, queueMs: 10_000 });
    const as = <T>(client: string, call: () => Promise<T>) => admissionClient.run(client, () => admission.run(call));
    const order: string[] = [];
    const gates = Array.from({ length: 6 }, gate);
    const track = (name: string, g: ReturnType<typeof gate>) => () => (order.push(name), g.call());
    // Free slots go to whoever comes; then greedy may queue two (half the queue), not three.
    const greedy = [0, 1, 2, 3].map((i) => as('greedy', track(`greedy-${i}`, gates[i]!)));
    const over = await as('greedy', async () => 'never').catch((error: ApiError) => error.code);
    expect(over).toBe('overloaded');
    // Polite queues behind greedy's backlog, but is served first.
    const polite = as('polite', track('polite', gates[4]!));
    expect(admission.stats()).toEqual({ inFlight: 2, queued: 3, refused: 1 });
    gates[0]!.open();
    await greedy[0];
    expect(order).toEqual(['greedy-0', 'greedy-1', 'polite']);
    for (const g of gates) g.open();
    expect(await Promise.all([...greedy, polite])).toEqual(['done', 'done', 'done', 'done', 'done']);
    expect(order).toEqual(['greedy-0', 'greedy-1', 'polite', 'greedy-2', 'greedy-3']);
    expect(admission.stats()).toEqual({ inFlight: 0, queued: 0, refused: 1 });
  });

  it('says whether a client would be refused now, so that the HTTP layer refuses before any work', async () => {
    const admission = createAdmission({ maxInFlight: 1, queue: 2, queueMs: 10_000 });
    expect(admission.full('a')).toBe(false);
    const busy = gate();
    const first = admissionClient.run('a', () => admission.run(busy.call));
    expect(admission.full('a')).toBe(false);
    const queued = admissionClient.run('a', () => admission.run(async () => 'queued'));
    // `a` holds half the queue; `b` still has a place.
    expect(admission.full('a')).toBe(true);
    expect(admission.full('b')).toBe(false);
    expect(admission.stats().refused).toBe(1);
    busy.open();
    expect(await Promise.all([first, queued])).toEqual(['done', 'queued']);
    expect(admission.full('a')).toBe(false);
  });

  it('runs probes at once, outside the count, even when full', async () => {
    const admission = createAdmission({ maxInFlight: 1, queue: 0, queueMs: 10 });
    const busy = gate();
    const first = admission.run(busy.call);
    expect(await admissionClient.run(UNADMITTED, () => admission.run(async () => 'probe'))).toBe('probe');
    expect(admission.stats()).toEqual({ inFlight: 1, queued: 0, refused: 0 });
    busy.open();
    await first;
  });
});
