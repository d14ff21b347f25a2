/**
 * How many of something each client holds at once — its downloads in flight, open connections,
 * open streams — each counted up when taken and down when given back; keys at zero are dropped,
 * so the map holds only clients that hold something.
 */
export class Tally {
  private readonly held = new Map<string, number>();

  of(key: string): number {
    return this.held.get(key) ?? 0;
  }

  add(key: string): void {
    this.held.set(key, this.of(key) + 1);
  }

  remove(key: string): void {
    const left = this.of(key) - 1;
    if (left > 0) this.held.set(key, left);
    else this.held.delete(key);
  }

  /** Every key holding something, with its count. */
  entries(): ReadonlyMap<string, number> {
    return this.held;
  }
}
