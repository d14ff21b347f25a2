/**
 * Reads reused for a while: what `read` answered for a key is answered again for `ms`, and the
 * askers meanwhile share one read; a failed read is forgotten at once, so the next ask reads
 * again. The `max` most recently read keys are held. The live generation, the kept ones and a
 * kept generation's document are read so: once a second, whatever the rate of requests.
 */
import { LRUCache } from 'lru-cache';

export function reusedFor<V>(ms: number, max: number, read: (key: string) => Promise<V>): (key: string) => Promise<V> {
  const held = new LRUCache<string, { at: number; value: Promise<V> }>({ max });
  return (key) => {
    const now = Date.now();
    const entry = held.get(key);
    if (entry && now - entry.at <= ms) return entry.value;
    const value = read(key);
    held.set(key, { at: now, value });
    value.catch(() => {
      if (held.get(key)?.value === value) held.delete(key);
    });
    return value;
  };
}
