/**
 * How fresh the served data is, for the /metrics gauges (src/http/metrics.ts `Freshness`): the
 * follower's last check and last load, as it records them in the loaders' state index, and the
 * live bundle's generation and publication instants, when it went live and the lag between.
 */
import type { Freshness } from '../http/metrics.ts';
import { toInstant } from '../time/instant.ts';
import type { FollowerState } from '../indices/state.ts';
import type { SearchService } from '../search/search-service.ts';

/** Epoch seconds of an RFC 3339 instant (the manifest's, the pointer's, the loader's), read strictly; undefined when it is not one. */
const seconds = (text: string | undefined) => {
  const ms = toInstant(text)?.ms;
  return ms === undefined ? undefined : ms / 1000;
};

export function createFreshnessSource(search: SearchService): () => Promise<Freshness> {
  return async () => {
    const [live, follower] = await Promise.all([search.live().catch(() => undefined), search.state<FollowerState>('follower').catch(() => undefined)]);
    const published = seconds(live?.publishedAt) ?? seconds(live?.generatedAt);
    const loaded = seconds(live?.loadedAt);
    return {
      source: follower?.source,
      generation: live?.generation,
      lastCheck: seconds(follower?.checkedAt),
      lastCheckFailed: follower && follower.outcome === 'failed',
      lastLoad: seconds(follower?.loadedAt),
      generated: seconds(live?.generatedAt),
      published,
      live: loaded,
      lag: published !== undefined && loaded !== undefined ? Math.max(0, loaded - published) : undefined,
    };
  };
}
