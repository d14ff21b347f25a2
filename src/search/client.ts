/**
 * The Elasticsearch client of this project: the 8.x client (an 8.x server refuses the 9.x
 * client's compatibility header; the 8.x client also talks to 9.x servers).
 */
import { Client, Serializer } from '@elastic/elasticsearch';

/**
 * Bulk bodies as one Buffer. The transport's default joins the lines into one string of
 * megabytes, then scans it again for its byte length and copies it once more into a Buffer;
 * a Buffer's length is known and it is sent as it is. (Profiled on a 1.5 M-row load: the
 * string path cost the loader 11 of its 45 CPU seconds.) The transport accepts a Buffer
 * wherever it accepts a serialized body.
 */
class BulkBufferSerializer extends Serializer {
  override ndserialize(lines: (string | Record<string, unknown>)[]): string {
    const text = lines.map((line) => (typeof line === 'string' ? line : this.serialize(line))).join('\n');
    return Buffer.from(`${text}\n`) as unknown as string;
  }
}

/**
 * `maxRetries`: the loader retries (with the transport's exponential backoff) so a busy
 * cluster does not fail a long load; the gateway does not (0), so a request meets a down
 * cluster with an immediate 503 + Retry-After instead of seconds of backoff.
 */
export function createClient(url: string, requestTimeoutMs = 30_000, maxRetries = 2): Client {
  return new Client({ node: url, requestTimeout: requestTimeoutMs, maxRetries, compression: false, Serializer: BulkBufferSerializer });
}
