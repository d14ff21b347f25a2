/**
 * The Elasticsearch client of this project: the 8.x client (an 8.x server refuses the 9.x
 * client's compatibility header; the 8.x client also talks to 9.x servers).
 */
import { Client } from '@elastic/elasticsearch';

/**
 * `maxRetries`: the loader retries (with the transport's exponential backoff) so a busy
 * cluster does not fail a long load; the gateway does not (0), so a request meets a down
 * cluster with an immediate 503 + Retry-After instead of seconds of backoff.
 */
export function createClient(url: string, requestTimeoutMs = 30_000, maxRetries = 2): Client {
  return new Client({ node: url, requestTimeout: requestTimeoutMs, maxRetries, compression: false });
}
