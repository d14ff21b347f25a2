/**
 * What loaders share through Elasticsearch beside the generations, in one small index per
 * prefix (`<prefix>-state`, never aliased, never pruned):
 *
 * - `lock`: one load (or rollback) at a time per prefix, across processes and machines. Taken
 *   with a create, which Elasticsearch refuses when the document exists; kept by a heartbeat
 *   that extends its lease with a compare-and-set on the document's sequence number; released
 *   with a conditional delete. A lease nobody renews (a loader killed with -9) expires and is
 *   taken over, again by compare-and-set, so two waiters never both get it. A loader on the same
 *   host takes over at once the lease of one that no longer runs there (a follower restarted after
 *   a crash: `ownerGone`), without waiting for it to expire.
 * - `rollbacks`: bundles rolled back from, which a follower does not load again.
 * - `follower`: the follower's last check and last load, for the gateway's /metrics.
 */
import { hostname } from 'node:os';
import type { Client } from '@elastic/elasticsearch';
import { STATE_INDEX, type FollowerState, type RolledBack } from '../src/indices/state.ts';
import { LoadError } from './errors.ts';

export function stateIndex(prefix: string): string {
  return `${prefix}-${STATE_INDEX}`;
}

async function ensureStateIndex(client: Client, prefix: string): Promise<string> {
  const index = stateIndex(prefix);
  // 400 resource_already_exists: another loader made it first.
  await client.indices.create({ index, settings: { number_of_shards: 1, auto_expand_replicas: '0-1' }, mappings: { dynamic: false, properties: {} } }, { ignore: [400] });
  return index;
}

interface LockDoc {
  owner: string;
  acquiredAt: string;
  expiresAt: number;
}

export interface LoadLock {
  /** Aborted when the lease was lost (another loader took it over): the load must stop. */
  readonly signal: AbortSignal;
  release(): Promise<void>;
}

export interface LockOptions {
  /** A lease not renewed for this long may be taken over. */
  leaseMs?: number;
  heartbeatMs?: number;
  /** Stops waiting. */
  signal?: AbortSignal;
  /** Called once when the lock is held by another loader and this one waits. */
  onWait?: (owner: string) => void;
}

/**
 * Whether the owner of a lease is a loader of this host that no longer runs: its process is gone,
 * or it had this very process id (a container restarted: the same host name, the same pid 1) under
 * another owner. An owner of another host is never judged: only its lease's expiry frees it.
 */
export function ownerGone(owner: string, self: string, alive: (pid: number) => boolean = pidAlive, ours: ReadonlySet<string> = owners): boolean {
  const [host, pid] = owner.split(':');
  const [ownHost, ownPid] = self.split(':');
  if (host !== ownHost || !pid || !/^\d+$/.test(pid) || ours.has(owner)) return false;
  return pid === ownPid || !alive(Number(pid));
}

/** The owner names of this process's loaders (one process may run several: they wait for each other like any two). */
const owners = new Set<string>();

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const isConflict = (error: unknown) => (error as { meta?: { statusCode?: number } }).meta?.statusCode === 409;

/** Waits until this process holds the prefix's load lock. */
export async function acquireLoadLock(client: Client, prefix: string, options: LockOptions = {}): Promise<LoadLock> {
  const { leaseMs = 60_000, heartbeatMs = 15_000, signal, onWait } = options;
  const index = await ensureStateIndex(client, prefix);
  const owner = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  owners.add(owner);
  const lease = (): LockDoc => ({ owner, acquiredAt: new Date().toISOString(), expiresAt: Date.now() + leaseMs });
  let held: { seq: number; term: number } | undefined;
  let waited = false;
  while (!held) {
    if (signal?.aborted) {
      owners.delete(owner);
      throw new LoadError('interrupted while waiting for another load to finish');
    }
    try {
      const created = await client.create({ index, id: 'lock', document: lease() });
      held = { seq: created._seq_no!, term: created._primary_term! };
      break;
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
    const current = await client.get<LockDoc>({ index, id: 'lock' }, { ignore: [404] });
    if (current.found && current._source && (current._source.expiresAt < Date.now() || ownerGone(current._source.owner, owner))) {
      try {
        const taken = await client.index({ index, id: 'lock', document: lease(), if_seq_no: current._seq_no!, if_primary_term: current._primary_term! });
        held = { seq: taken._seq_no!, term: taken._primary_term! };
        break;
      } catch (error) {
        if (!isConflict(error)) throw error;
      }
    }
    if (!waited && current.found) {
      waited = true;
      onWait?.(current._source?.owner ?? 'another loader');
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }

  const lost = new AbortController();
  const heartbeat = setInterval(async () => {
    try {
      const renewed = await client.index({ index, id: 'lock', document: lease(), if_seq_no: held!.seq, if_primary_term: held!.term });
      held = { seq: renewed._seq_no!, term: renewed._primary_term! };
    } catch (error) {
      // Taken over or deleted: this loader may no longer write. Another failure retries on the next beat.
      if (isConflict(error) || (error as { meta?: { statusCode?: number } }).meta?.statusCode === 404) lost.abort();
    }
  }, heartbeatMs);
  heartbeat.unref();
  return {
    signal: lost.signal,
    async release() {
      clearInterval(heartbeat);
      await client.delete({ index, id: 'lock', if_seq_no: held!.seq, if_primary_term: held!.term }, { ignore: [404, 409] });
      owners.delete(owner);
    },
  };
}

/** Runs `work` holding the prefix's load lock; `work`'s signal aborts on the caller's signal or a lost lease. */
export async function withLoadLock<T>(client: Client, prefix: string, options: LockOptions, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const lock = await acquireLoadLock(client, prefix, options);
  try {
    return await work(options.signal ? AbortSignal.any([options.signal, lock.signal]) : lock.signal);
  } finally {
    await lock.release();
  }
}

/** Bundles rolled back from (newest last), which a follower does not load again. */
export async function rolledBack(client: Client, prefix: string): Promise<RolledBack[]> {
  const response = await client.get<{ bundles: RolledBack[] }>({ index: stateIndex(prefix), id: 'rollbacks' }, { ignore: [404] });
  return response._source?.bundles ?? [];
}

export async function recordRollback(client: Client, prefix: string, entry: RolledBack): Promise<void> {
  const index = await ensureStateIndex(client, prefix);
  const bundles = [...(await rolledBack(client, prefix)).filter((b) => b.manifestSha256 !== entry.manifestSha256), entry].slice(-20);
  await client.index({ index, id: 'rollbacks', document: { bundles } });
}

/**
 * The follower's record of its last check (read by the gateway's /metrics). A partial update:
 * a check that loaded nothing keeps the last load another follower recorded.
 */
export async function recordFollower(client: Client, prefix: string, state: FollowerState): Promise<void> {
  const index = await ensureStateIndex(client, prefix);
  await client.update({ index, id: 'follower', doc: state, doc_as_upsert: true, retry_on_conflict: 3 });
}
