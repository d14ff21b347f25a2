/**
 * The expensive searches a gateway is asked most — aggregations (`group_by`, facets, histograms:
 * `size: 0`) and first pages that count their rows — kept as their exact bodies, so that a new
 * generation can be warmed with them before it is served (search-service.ts). Bounded: the
 * HOT_KEYS most recently asked bodies, each with how often; every warm-up halves the counts, so
 * the list follows what clients ask now.
 */
import { LRUCache } from 'lru-cache';
import type { IndexName } from '../indices/all.ts';
import type { SearchBody } from '../query/list.ts';

/** Distinct bodies remembered. */
const HOT_KEYS = 256;

export interface HotRequest {
  index: IndexName;
  body: SearchBody;
  /** Read as a page of rows (`searchRows`), else as a parsed search. */
  rows: boolean;
  asks: number;
}

/** Whether a search costs Elasticsearch the whole index: an aggregation, or a page that counts its rows. */
export function isExpensive(body: SearchBody, rows: boolean): boolean {
  return rows ? body.track_total_hits !== undefined && body.track_total_hits !== false : body.size === 0 && body.aggs !== undefined;
}

export class HotRequests {
  readonly #known = new LRUCache<string, HotRequest>({ max: HOT_KEYS });

  /** Notes one ask of an expensive search (others are left out). */
  record(index: IndexName, body: SearchBody, rows: boolean): void {
    if (!isExpensive(body, rows)) return;
    const key = `${index}\u0000${rows}\u0000${JSON.stringify(body)}`;
    const known = this.#known.get(key);
    if (known) known.asks += 1;
    // A copy: the caller's body is not ours to keep.
    else this.#known.set(key, { index, body: JSON.parse(JSON.stringify(body)) as SearchBody, rows, asks: 1 });
  }

  get size(): number {
    return this.#known.size;
  }

  /** The `count` most asked, most asked first; every count is halved (rounded up) for the next time. */
  take(count: number): HotRequest[] {
    const all = [...this.#known.values()];
    const top = all.toSorted((a, b) => b.asks - a.asks).slice(0, count).map((request) => ({ ...request }));
    for (const request of all) request.asks = Math.ceil(request.asks / 2);
    return top;
  }
}
