/**
 * How hard a load may drive the cluster: bulk requests in flight across all files, and files
 * loading side by side, from the write thread pools of its data nodes (`GET _nodes/thread_pool`).
 * A bulk request is written by one write thread per shard it touches; fewer requests in flight
 * than threads leave threads idle (3 in flight kept 2 of 16 cores busy).
 */
import type { Client } from '@elastic/elasticsearch';

export interface ClusterCapacity {
  dataNodes: number;
  /** Write threads summed over the data nodes. */
  writeThreads: number;
}

/** Bytes of bulk bodies a load may hold at once (in flight, or built and waiting to be sent): keeps the loader's peak RSS ≤ 300 MB. */
export const MAX_BUFFERED_BYTES = 48 * 1024 ** 2;

/** Files loaded side by side at most: each holds a batch read ahead and a request being filled; more than this adds memory, not speed. */
export const MAX_FILES_AT_ONCE = 4;

type NodesThreadPool = { nodes?: Record<string, { roles?: string[]; thread_pool?: { write?: { size?: number; max?: number } } }> };

/** The data nodes and their write threads; a node without a data role holds no shard and writes nothing. */
export function capacityOf(response: NodesThreadPool): ClusterCapacity {
  const data = Object.values(response.nodes ?? {}).filter((node) => (node.roles ?? ['data']).some((role) => role === 'data' || role.startsWith('data_')));
  const writeThreads = data.reduce((sum, node) => sum + Math.max(1, node.thread_pool?.write?.size ?? node.thread_pool?.write?.max ?? 1), 0);
  return { dataNodes: Math.max(1, data.length), writeThreads: Math.max(1, writeThreads) };
}

/** What a load assumes when the cluster will not say (a user without the `monitor` privilege): one node of two write threads, the load's sizes before they were measured. */
export const UNKNOWN_CAPACITY: ClusterCapacity = { dataNodes: 1, writeThreads: 2 };

export async function clusterCapacity(client: Client, warn: (line: string) => void = () => {}): Promise<ClusterCapacity> {
  try {
    const response = await client.nodes.info({ metric: 'thread_pool', filter_path: 'nodes.*.roles,nodes.*.thread_pool.write' } as never);
    return capacityOf(response as NodesThreadPool);
  } catch (error) {
    warn(`the cluster's write threads are unknown (${(error as Error).message}); loading as on one node of ${UNKNOWN_CAPACITY.writeThreads} (LOAD_CONCURRENCY sets the requests in flight)`);
    return UNKNOWN_CAPACITY;
  }
}

/**
 * Bulk requests in flight across every file of a load: one per write thread and one more, so a
 * thread finishing a request finds the next one already there instead of waiting for the
 * loader's round trip (on the 2-core machine: 3, what a load used before); `override`
 * (LOAD_CONCURRENCY) wins. Either way capped so that the bodies held stay under
 * MAX_BUFFERED_BYTES (each request in flight holds its body and its documents' bytes).
 */
export function inFlightBudget(capacity: ClusterCapacity, flushBytes: number, override?: number): number {
  const wanted = override ?? capacity.writeThreads + 1;
  const affordable = Math.max(1, Math.floor(MAX_BUFFERED_BYTES / (2 * flushBytes)));
  return Math.max(1, Math.min(wanted, affordable));
}

/**
 * Files loaded side by side: one per four requests of budget, at most MAX_FILES_AT_ONCE. One
 * file's lines become bulk requests on one thread of the loader, faster than a few write threads
 * take them but not than many; a small cluster (the 2-core machine: a budget of 3) is kept busy
 * by one file at a time, and a second would only split the same cores between two indices.
 */
export function filesAtOnce(budget: number, files: number): number {
  return Math.max(1, Math.min(files, MAX_FILES_AT_ONCE, Math.ceil(budget / 4)));
}
