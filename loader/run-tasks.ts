/**
 * Runs the files of a load side by side: at most `limit` at once, each once the tasks it comes
 * `after` have finished (killmails read the entities and relations of the generation being
 * built), the most urgent first. The first failure stops the others (their signal aborts) and
 * is what the run rejects with, once every task started has settled: nothing keeps writing
 * after the load gave up, so the indices it built can be deleted for good.
 */
export interface Task<T> {
  name: string;
  /** Names of tasks that must finish first (names of no task here are done already). */
  after: readonly string[];
  /** Higher starts first among the tasks ready. */
  priority: number;
  run(signal: AbortSignal): Promise<T>;
}

export async function runTasks<T>(tasks: readonly Task<T>[], limit: number, signal?: AbortSignal): Promise<Map<string, T>> {
  const stop = new AbortController();
  const taskSignal = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
  const names = new Set(tasks.map((t) => t.name));
  const pending = [...tasks].sort((a, b) => b.priority - a.priority);
  const done = new Map<string, T>();
  const running = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;

  const ready = (task: Task<T>) => task.after.every((name) => !names.has(name) || done.has(name));
  for (;;) {
    while (!failure && !signal?.aborted && running.size < limit) {
      const at = pending.findIndex(ready);
      if (at === -1) break;
      const [task] = pending.splice(at, 1);
      const run: Promise<void> = task!
        .run(taskSignal)
        .then((value) => {
          done.set(task!.name, value);
        })
        .catch((error: unknown) => {
          failure ??= { error };
          stop.abort(error);
        })
        .finally(() => running.delete(run));
      running.add(run);
    }
    if (running.size === 0) break;
    await Promise.race(running);
  }
  if (failure) throw failure.error;
  signal?.throwIfAborted();
  if (pending.length) throw new Error(`tasks that wait on each other: ${pending.map((t) => t.name).join(', ')}`);
  return done;
}
