/**
 * The state index (`<prefix>-state`): what loaders share beside the generations (loader/state.ts
 * writes it) and the gateway reads for /metrics. Its documents, by id.
 */
export const STATE_INDEX = 'state';

/** A bundle rolled back from (document `rollbacks`, a list): a follower does not load it again. */
export interface RolledBack {
  manifestSha256: string;
  bundleId: string;
  generation: string;
  /** When it was rolled back from. */
  at: string;
}

/** The follower's last check (document `follower`). */
export interface FollowerState {
  source: string;
  /** When it last read the source's pointer, and what came of it. */
  checkedAt: string;
  outcome: 'unchanged' | 'live' | 'loaded' | 'skipped' | 'busy' | 'failed';
  message: string;
  /** Its last successful load. */
  loadedAt?: string;
  generation?: string;
}
