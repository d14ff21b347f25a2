/**
 * The Elasticsearch client of this project: the 8.x client (an 8.x server refuses the 9.x
 * client's compatibility header; the 8.x client also talks to 9.x servers), pointed at one
 * node or at the nodes of one cluster (`ES_URL` as a comma-separated list, see `parseEsUrl`).
 * It neither sniffs nor discovers nodes: it uses exactly the nodes it is given.
 */
import { Client, ClusterConnectionPool, Serializer, SniffingTransport, type TransportOptions } from '@elastic/elasticsearch';
import { parseEsUrl } from '../config.ts';

/**
 * Bulk bodies as one Buffer. The transport's default joins the lines into one string of
 * megabytes, then scans it again for its byte length and copies it once more into a Buffer;
 * a Buffer's length is known and it is sent as it is (the string path was a quarter of the
 * loader's CPU). The transport accepts a Buffer
 * wherever it accepts a serialized body.
 */
class BulkBufferSerializer extends Serializer {
  override ndserialize(lines: (string | Record<string, unknown>)[]): string {
    const text = lines.map((line) => (typeof line === 'string' ? line : this.serialize(line))).join('\n');
    return Buffer.from(`${text}\n`) as unknown as string;
  }
}

/**
 * The client's own transport without its OpenTelemetry spans. Nothing here registers a tracer,
 * yet each request paid for a span's attributes and context, a tenth of the gateway's CPU per
 * request.
 */
class UntracedTransport extends SniffingTransport {
  constructor(options: TransportOptions) {
    super({ ...options, openTelemetry: { enabled: false } });
  }
}

/**
 * How a client meets a node that cannot be reached (or answers 502/503/504, which the
 * transport treats alike):
 * - `backoff` (the loader, scripts, tests): up to 2 retries, so a busy cluster does not fail a
 *   long load; once every listed node was tried, the transport waits with exponential backoff.
 * - `failover` (the gateway): with one node, no retry at all, so a down cluster answers 503 +
 *   Retry-After in milliseconds; with several nodes, exactly one retry, which goes to another
 *   living node at once (reads are idempotent). The transport only backs off when the attempts
 *   reach the number of nodes, so one retry over two or more nodes never sleeps. Timeouts are
 *   never retried (`retryOnTimeout` stays off): a slow cluster answers 504 after one timeout.
 */
export type RetryRule = 'backoff' | 'failover';

/** Retries a client makes for a rule over this many nodes (see `RetryRule`). */
export function maxRetriesFor(rule: RetryRule, nodes: number): number {
  if (rule === 'backoff') return 2;
  return nodes > 1 ? 1 : 0;
}

export function createClient(url: string, requestTimeoutMs = 30_000, retry: RetryRule = 'backoff'): Client {
  const nodes = parseEsUrl(url);
  return new Client({
    nodes,
    requestTimeout: requestTimeoutMs,
    maxRetries: maxRetriesFor(retry, nodes.length),
    compression: false,
    Serializer: BulkBufferSerializer,
    Transport: UntracedTransport,
    // The default ('replace') clones every error's diagnostic recursively to mask secrets, and a
    // bulk body is a Buffer: each of its bytes became a key of the clone. A load that stopped its
    // bulk requests in flight (another file refused a row; a timeout under a partition) grew by
    // hundreds of megabytes in seconds. 'remove' drops the headers, options and connection
    // (where secrets live) in place and leaves the body as it was.
    redaction: { type: 'remove' },
    // The client's default pool keeps a failed node in rotation at a lower weight, so under
    // concurrent requests a retry may still be sent to it; this pool takes a failed node out of
    // rotation until a ping (HEAD /, every minute or less often) finds it back.
    ...(nodes.length > 1 ? { ConnectionPool: ClusterConnectionPool } : {}),
  });
}
