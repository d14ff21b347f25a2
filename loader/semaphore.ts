/**
 * A counting semaphore: the bulk requests in flight of every file of a load share one budget
 * (loader/write-capacity.ts sizes it), so files loading side by side never ask more of the
 * cluster's write threads than the budget, nor hold more request bodies in memory.
 */
export class Semaphore {
  readonly size: number;
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(size: number) {
    this.size = size;
    if (!Number.isSafeInteger(size) || size < 1) throw new RangeError(`a semaphore needs at least one slot, got ${size}`);
    this.#free = size;
  }

  /** Slots free now. */
  get free(): number {
    return this.#free;
  }

  /** Waits for a slot; resolves with its release (call it once). Rejects with the abort's reason if `signal` aborts first. */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.#free > 0) {
      this.#free -= 1;
    } else {
      await new Promise<void>((resolve, reject) => {
        const granted = () => {
          signal?.removeEventListener('abort', aborted);
          resolve();
        };
        const aborted = () => {
          const at = this.#waiting.indexOf(granted);
          if (at !== -1) this.#waiting.splice(at, 1);
          reject(signal!.reason);
        };
        this.#waiting.push(granted);
        signal?.addEventListener('abort', aborted, { once: true });
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // A waiter takes the slot over directly: the count never shows it free in between.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free += 1;
    };
  }
}
