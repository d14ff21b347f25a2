/**
 * `_bulk` requests of documents that are already bytes: each item is its action line and its
 * source as Buffers (the exported line's own bytes inside), and a request body is those pieces
 * concatenated once. Elastic's bulk helper takes strings: it measures each one, joins them
 * into one string and the transport encodes that again — on a 1.5 M-row load about 8 of the
 * loader's 44 CPU seconds, and most of its garbage. What the helper does that a load needs is
 * kept: `concurrency` requests in flight (and a slot of a budget shared with other files, when
 * given), documents Elasticsearch answers 429 sent again after a
 * wait, the first document it refuses reported (and the rest not sent), an abort.
 *
 * A 409 is not a refusal here: documents carry external versions (row-items.ts), and a 409 is
 * an earlier line of a repeated id that landed after the last one, which stays.
 */
import type { Client } from '@elastic/elasticsearch';
import type { Semaphore } from './semaphore.ts';

export interface BulkItem {
  /** Action line and source line, each ending in `\n`. */
  pieces: Buffer[];
  bytes: number;
  /** Documents it holds, 1 unless said: a parse worker's block of documents is one item (parse-pool.ts). */
  documents?: number;
  /** Its `k`-th document as an item of its own (items of several documents): sent again alone after a 429, or reported when refused. */
  document?(k: number): BulkItem;
}

export interface BulkOptions {
  /** The index every action writes to (the request's path). */
  index: string;
  /** Bytes per request (the last one may be smaller). */
  flushBytes: number;
  /** Requests in flight. */
  concurrency: number;
  /** The load's budget of requests in flight, shared by the files loading side by side: each request holds a slot. */
  slots?: Semaphore;
  signal?: AbortSignal;
  /** Times a document answered 429 is sent again, and the first wait (doubling). */
  retries?: number;
  retryMs?: number;
}

export interface BulkOutcome<T> {
  successful: number;
  /** 409s: superseded by a later line of the same id. */
  superseded: number;
  /**
   * The first document refused, when one was (nothing more was sent then); `transient` when the
   * refusal is the cluster's rather than the row's (see `refusedByCluster`).
   */
  refused?: { item: T; reason: string; transient: boolean };
}

/**
 * Whether an item's refusal says nothing of its row: the index or a shard copy was not there
 * for the node that took it (404 `index_not_found` from a node behind the master's view, 503
 * `unavailable_shards`, a 5xx of a node leaving) or it timed out. A row Elasticsearch cannot
 * take is a 400 (its mapping refuses a value).
 */
export const refusedByCluster = (status: number): boolean => status === 404 || status === 408 || status >= 500;

type ItemResult = { status: number; error?: { type?: string; reason?: string } };

export async function sendBulk<T extends BulkItem>(client: Client, items: AsyncIterable<T>, options: BulkOptions): Promise<BulkOutcome<T>> {
  const { index, flushBytes, concurrency, slots, signal, retries = 3, retryMs = 1000 } = options;
  const outcome: BulkOutcome<T> = { successful: 0, superseded: 0 };
  const inFlight = new Set<Promise<void>>();
  let failure: unknown;

  async function send(chunk: T[], attempt = 0): Promise<void> {
    const pieces = chunk.flatMap((item) => item.pieces);
    const body = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, chunk.reduce((n, item) => n + item.bytes, 0));
    const response = (await client.bulk({ index, body, filter_path: 'errors,items.*.status,items.*.error' } as never, { signal })) as { errors: boolean; items?: Record<string, ItemResult>[] };
    if (!response.errors) {
      outcome.successful += chunk.reduce((n, item) => n + (item.documents ?? 1), 0);
      return;
    }
    // The answer has one entry per document: each of an item of several documents stands alone.
    const documents = chunk.flatMap((item) => ((item.documents ?? 1) === 1 ? [item] : Array.from({ length: item.documents! }, (_, k) => item.document!(k) as T)));
    const again: T[] = [];
    response.items!.forEach((entry, i) => {
      const { status, error } = Object.values(entry)[0]!;
      if (status < 300) outcome.successful += 1;
      else if (status === 409) outcome.superseded += 1;
      else if (status === 429 && attempt < retries) again.push(documents[i]!);
      else outcome.refused ??= { item: documents[i]!, reason: error ? `${error.type}: ${error.reason ?? ''}` : `status ${status}`, transient: refusedByCluster(status) };
    });
    if (again.length && !outcome.refused) {
      await new Promise((resolve) => setTimeout(resolve, retryMs * 2 ** attempt));
      await send(again, attempt + 1);
    }
  }

  function dispatch(chunk: T[], release?: () => void): void {
    const request = send(chunk)
      .catch((error: unknown) => {
        failure ??= error;
      })
      .finally(release);
    inFlight.add(request);
    void request.finally(() => inFlight.delete(request));
  }

  /** A slot of the shared budget (a no-op release without one); undefined once aborted while waiting. */
  async function acquire(): Promise<(() => void) | undefined> {
    if (!slots) return () => {};
    return slots.acquire(signal).catch(() => undefined);
  }

  let chunk: T[] = [];
  let bytes = 0;
  for await (const item of items) {
    if (failure || outcome.refused || signal?.aborted) break;
    chunk.push(item);
    bytes += item.bytes;
    if (bytes < flushBytes) continue;
    while (inFlight.size >= concurrency) await Promise.race(inFlight);
    const release = await acquire();
    if (!release) break;
    dispatch(chunk, release);
    chunk = [];
    bytes = 0;
  }
  if (chunk.length && !failure && !outcome.refused && !signal?.aborted) {
    const release = await acquire();
    if (release) dispatch(chunk, release);
  }
  await Promise.all(inFlight);
  signal?.throwIfAborted();
  if (failure) throw failure;
  return outcome;
}
