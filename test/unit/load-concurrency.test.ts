/**
 * How a load drives the cluster: the requests in flight and files side by side sized from its
 * write threads (loader/write-capacity.ts), the budget they share (loader/semaphore.ts), and the
 * files run in dependency order, stopping together on a failure (loader/run-tasks.ts).
 */
import { describe, expect, it } from 'vitest';
import { runTasks } from '../../loader/run-tasks.ts';
import { Semaphore } from '../../loader/semaphore.ts';
import { MAX_BUFFERED_BYTES, MAX_FILES_AT_ONCE, capacityOf, filesAtOnce, inFlightBudget } from '../../loader/write-capacity.ts';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('the cluster\'s capacity', () => {
  it('sums the write threads of the data nodes, and counts them', () => {
    const capacity = capacityOf({
      nodes: {
        a: { roles: ['master', 'data_hot', 'ingest'], thread_pool: { write: { size: 16 } } },
        b: { roles: ['data'], thread_pool: { write: { size: 8 } } },
        c: { roles: ['master'], thread_pool: { write: { size: 4 } } },
      },
    });
    expect(capacity).toEqual({ dataNodes: 2, writeThreads: 24 });
    expect(capacityOf({})).toEqual({ dataNodes: 1, writeThreads: 1 });
  });

  it('keeps one request in flight per write thread and one more, unless LOAD_CONCURRENCY says otherwise', () => {
    expect(inFlightBudget({ dataNodes: 1, writeThreads: 2 }, 1_000_000)).toBe(3);
    expect(inFlightBudget({ dataNodes: 1, writeThreads: 16 }, 1_000_000)).toBe(17);
    expect(inFlightBudget({ dataNodes: 1, writeThreads: 16 }, 1_000_000, 5)).toBe(5);
  });

  it('never holds more bulk bodies than MAX_BUFFERED_BYTES, whatever the cluster or the override', () => {
    const flush = 4 * 1024 ** 2;
    const budget = inFlightBudget({ dataNodes: 10, writeThreads: 320 }, flush, 500);
    expect(budget * 2 * flush).toBeLessThanOrEqual(MAX_BUFFERED_BYTES);
    expect(inFlightBudget({ dataNodes: 1, writeThreads: 1 }, 1e9)).toBe(1);
  });

  it('loads a few files side by side on a large cluster, one at a time on a small one, never more than there are', () => {
    expect(filesAtOnce(3, 11)).toBe(1);
    expect(filesAtOnce(8, 11)).toBe(2);
    expect(filesAtOnce(17, 11)).toBe(MAX_FILES_AT_ONCE);
    expect(filesAtOnce(17, 1)).toBe(1);
    expect(filesAtOnce(1, 0)).toBe(1);
  });
});

describe('Semaphore', () => {
  it('grants at most its size at once, in order, and a waiter takes a released slot', async () => {
    const slots = new Semaphore(2);
    const first = await slots.acquire();
    await slots.acquire();
    const order: string[] = [];
    const third = slots.acquire().then((release) => (order.push('third'), release));
    const fourth = slots.acquire().then((release) => (order.push('fourth'), release));
    await tick();
    expect(order).toEqual([]);
    first();
    first();
    await tick();
    expect(order).toEqual(['third']);
    (await third)();
    expect(await fourth).toBeTypeOf('function');
    expect(order).toEqual(['third', 'fourth']);
    expect(slots.free).toBe(0);
  });

  it('rejects a waiter whose signal aborts, without losing the slot', async () => {
    const slots = new Semaphore(1);
    const held = await slots.acquire();
    const stop = new AbortController();
    const waiting = slots.acquire(stop.signal);
    stop.abort(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
    held();
    expect(slots.free).toBe(1);
  });
});

describe('runTasks', () => {
  /** A task that records when it starts and ends, finishing when told. */
  function recorder() {
    const log: string[] = [];
    const finish = new Map<string, () => void>();
    const task = (name: string, after: string[] = [], priority = 0, fail?: Error) => ({
      name,
      after,
      priority,
      run: (signal: AbortSignal) =>
        new Promise<string>((resolve, reject) => {
          log.push(`start ${name}`);
          signal.addEventListener('abort', () => (log.push(`stop ${name}`), reject(signal.reason)));
          finish.set(name, () => (fail ? reject(fail) : (log.push(`end ${name}`), resolve(name))));
        }),
    });
    return { log, finish, task };
  }

  it('runs at most `limit` at once, the highest priority first, each after what it waits on', async () => {
    const { log, finish, task } = recorder();
    const run = runTasks([task('small', [], 1), task('entities', [], 5), task('killmails', ['entities', 'absent'], 9), task('events', [], 3)], 2);
    await tick();
    expect(log).toEqual(['start entities', 'start events']);
    finish.get('entities')!();
    await tick();
    expect(log.slice(2)).toEqual(['end entities', 'start killmails']);
    finish.get('events')!();
    finish.get('killmails')!();
    await tick();
    await tick();
    finish.get('small')!();
    const done = await run;
    expect([...done.keys()].sort()).toEqual(['entities', 'events', 'killmails', 'small']);
  });

  it('stops the others on the first failure and rejects with it once they settled', async () => {
    const { log, finish, task } = recorder();
    const broken = new Error('events.jsonl:3: invalid JSON');
    const run = runTasks([task('events', [], 2, broken), task('entities', [], 1), task('killmails', ['entities'])], 2);
    await tick();
    finish.get('events')!();
    await expect(run).rejects.toBe(broken);
    expect(log).toContain('stop entities');
    expect(log).not.toContain('start killmails');
  });

  it('rejects with the caller\'s abort', async () => {
    const { task } = recorder();
    const stop = new AbortController();
    const run = runTasks([task('events')], 1, stop.signal);
    await tick();
    stop.abort();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
  });
});
