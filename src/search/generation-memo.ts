/**
 * Answers that cannot change within an index generation — a generation is never written again
 * once live — read from Elasticsearch once per generation and key. Concurrent askers share one
 * read; a failed read is forgotten, so the next ask reads again. The most recently used
 * `maxEntries` (generation, key) pairs are kept: around a swap both generations are asked for.
 */
import { LRUCache } from 'lru-cache';
import type { Reader } from './search-service.ts';

export function generationMemo<K, V extends {}>(read: (reader: Reader, key: K) => Promise<V>, keyOf: (key: K) => string, maxEntries: number): (reader: Reader, key: K) => Promise<V> {
  const known = new LRUCache<string, Promise<V>>({ max: maxEntries });
  return (reader, key) => {
    const id = `${reader.generation.generation}\u0000${keyOf(key)}`;
    let answer = known.get(id);
    if (!answer) {
      answer = read(reader, key);
      answer.catch(() => known.delete(id));
      known.set(id, answer);
    }
    return answer;
  };
}
