/**
 * Follow mode: every `everyMs`, read the source's pointer with a conditional request (a 304 —
 * or, for a directory, an unchanged file — costs nothing) and load each new bundle once.
 *
 * - One log line per check, and the check recorded in the state index for the gateway's
 *   /metrics (last check, last load).
 * - Loads take the prefix's load lock (loader/state.ts): two followers on one cluster load a
 *   bundle once — the second waits, then finds it live.
 * - A bundle rolled back from is not loaded again; the follower waits for a newer one.
 * - A bundle refused (a bad export) is not tried again until the pointer names another one; a
 *   source that cannot be read (an outage, retries exhausted) is tried again at the next check.
 *   The live generation keeps serving meanwhile.
 * - The signal (SIGTERM) stops a load in flight — what it built is deleted — and ends the loop.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { FollowerState } from '../src/indices/state.ts';
import { createObjectStore } from '../src/store/object-store.ts';
import { LoadError } from './errors.ts';
import { type LoadOptions, loadBundle } from './load-bundle.ts';
import { type PollValidators, pollSource } from './poll.ts';
import { recordFollower, rolledBack } from './state.ts';
import { formatSteps } from './summary.ts';


export interface FollowOptions extends LoadOptions {
  source: string;
  everyMs: number;
  log: (line: string) => void;
  /** Stops after this many checks (tests); default: until the signal. */
  checks?: number;
}

export async function follow(options: FollowOptions): Promise<void> {
  const { client, prefix, source, everyMs, log, signal, checks = Infinity } = options;
  const store = options.store ?? createObjectStore();
  let validators: PollValidators | undefined;
  let refused: { manifestSha256: string; reason: string } | undefined;
  let last: Pick<FollowerState, 'loadedAt' | 'generation'> = {};
  log(`following ${source} every ${everyMs / 1000} s`);
  for (let check = 1; check <= checks && !signal?.aborted; check += 1) {
    const checkedAt = new Date().toISOString();
    let outcome: FollowerState['outcome'];
    let message: string;
    let named: string | undefined;
    try {
      const found = await pollSource(source, { store, since: validators, signal });
      if (found.status === 'unchanged') {
        [outcome, message] = ['unchanged', 'the pointer has not changed'];
      } else {
        named = found.manifestSha256;
        const bundle = found.bundleId.slice(0, 16);
        if ((await rolledBack(client, prefix)).some((b) => b.manifestSha256 === found.manifestSha256)) {
          [outcome, message] = ['skipped', `bundle ${bundle} was rolled back from; waiting for a newer one`];
        } else if (refused?.manifestSha256 === found.manifestSha256) {
          [outcome, message] = ['skipped', `bundle ${bundle} was refused (${refused.reason}); waiting for a newer one`];
        } else {
          const summary = await loadBundle(source, { ...options, store });
          if (summary.status === 'loaded') {
            last = { loadedAt: new Date().toISOString(), generation: summary.generation };
            [outcome, message] = ['loaded', `bundle ${bundle} is live as generation ${summary.generation} (${summary.seconds.toFixed(1)} s: ${formatSteps(summary.steps)})`];
          } else {
            [outcome, message] = ['live', `bundle ${bundle} is live`];
          }
        }
        validators = found.validators;
      }
    } catch (error) {
      if (signal?.aborted) {
        log(`stopped: ${(error as Error).message}`);
        break;
      }
      outcome = 'failed';
      message = (error as Error).message;
      // A bundle the loader refused is not tried again until the pointer moves on; anything else
      // (the source unreachable) is: read the pointer afresh next time.
      if (error instanceof LoadError && named !== undefined && !error.transient) {
        refused = { manifestSha256: named, reason: message };
      }
      validators = undefined;
    }
    log(`check ${checkedAt}: ${outcome}: ${message}`);
    await recordFollower(client, prefix, { source, checkedAt, outcome, message, ...last }).catch((error: Error) => log(`could not record the check: ${error.message}`));
    if (check < checks) await sleep(everyMs, undefined, { signal }).catch(() => {});
  }
}
