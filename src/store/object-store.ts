/**
 * The object store client of the loader and the gateway: HEAD, a small document whole
 * (conditionally: 304 is an answer), a large object as a stream of its stored bytes, PUT and
 * DELETE (the test and bench publisher), for `s3://` and `http(s)://` URLs (transport.ts signs,
 * sends and retries each request).
 *
 * A stream that breaks mid-body is resumed where it stopped (`Range: bytes=<offset>-`, with the
 * object's validator as a precondition so a changed object is refused rather than spliced); a
 * server that ignores ranges is read again from its first byte, skipping what was already
 * given. Only failures in a row are bounded: a resumed read that made progress counts again
 * from one. It deliberately does not list buckets: a bundle is found by its manifest, by name.
 */
import type { IncomingMessage } from 'node:http';
import { StoreError } from './errors.ts';
import { type Validator, parseContentRange, readHeaders } from './ranges.ts';
import { type RequestBody, type StoreSettings, type TransportOptions, chunksOf, createTransport, header } from './transport.ts';

export type { RetryEvent } from './transport.ts';

/** What a HEAD (or the first answer of a read) says about a stored object. */
export interface ObjectInfo {
  /** Bytes stored; undefined when the store did not say (a chunked answer). */
  size: number | undefined;
  etag?: string;
  lastModified?: string;
}

/** A stored object's bytes from `start`, retried and resumed inside; `info` is its first answer's. */
export interface ObjectBody extends AsyncIterable<Buffer> {
  info: ObjectInfo;
}

export interface ReadOptions {
  /** First byte wanted (default 0) and last one, inclusive (default: the end). */
  start?: number;
  end?: number;
  /** The version expected (from a HEAD, or recorded at load time): any other is refused. */
  validator?: Validator;
  signal?: AbortSignal;
}

/** A small document: its bytes, or that it is unchanged since `since` (304), or absent (404). */
export type Fetched =
  | { status: 'ok'; bytes: Buffer; etag?: string; lastModified?: string }
  | { status: 'not-modified' }
  | { status: 'missing' };

export interface ObjectStore {
  /** The http(s) URL a store URL is requested at (what messages name). */
  requestUrl(url: string): string;
  head(url: string, options?: { signal?: AbortSignal }): Promise<ObjectInfo | undefined>;
  get(url: string, options?: { since?: Validator; signal?: AbortSignal; maxBytes?: number }): Promise<Fetched>;
  /** Resolves once the store answered the first request (so a refusal is known before any byte). */
  open(url: string, options?: ReadOptions): Promise<ObjectBody>;
  put(url: string, body: RequestBody, options: { contentType: string; signal?: AbortSignal }): Promise<void>;
  delete(url: string, options?: { signal?: AbortSignal }): Promise<void>;
}

export type ObjectStoreOptions = TransportOptions;

function infoOf(res: IncomingMessage): ObjectInfo {
  const length = header(res, 'content-length');
  return { size: length === undefined ? undefined : Number(length), etag: header(res, 'etag'), lastModified: header(res, 'last-modified') };
}

function ended(received: number, expected: number): Error {
  return Object.assign(new Error(`the body ended after ${received} of ${expected} bytes`), { code: 'ECONNRESET' });
}

export function createObjectStore(config: Partial<StoreSettings> = {}, options: ObjectStoreOptions = {}): ObjectStore {
  const transport = createTransport(config, options);
  const { timeoutMs, toHttp } = transport;

  async function open(url: string, { start = 0, end, validator, signal }: ReadOptions = {}): Promise<ObjectBody> {
    const shown = toHttp(url);
    let expected = validator;
    let ranges = true;
    /** Absolute position of the next byte the caller gets. */
    let offset = start;

    /** Asks for the bytes from `offset`; says where the answer's body starts. */
    async function connect(): Promise<{ res: IncomingMessage; position: number; size: number | undefined }> {
      const asked = readHeaders(offset, end, expected, ranges);
      let res: IncomingMessage;
      try {
        res = await transport.request('GET', url, { 'Accept-Encoding': 'identity', ...asked }, (s) => s === 200 || s === 206, signal);
      } catch (error) {
        if (error instanceof StoreError && error.status === 412) {
          throw new StoreError(`${error.message}: the object changed since it was first read`, { status: 412, code: error.code });
        }
        throw error;
      }
      const etag = header(res, 'etag');
      if (expected?.etag && etag && etag !== expected.etag) {
        res.destroy();
        throw new StoreError(`GET ${shown}: the object changed since it was first read (ETag ${etag}, expected ${expected.etag})`, { status: 412 });
      }
      if (res.statusCode === 206) {
        const range = parseContentRange(header(res, 'content-range'));
        if (!range || range.start !== offset) {
          res.destroy();
          throw new StoreError(`GET ${shown}: asked for bytes from ${offset}, got Content-Range ${header(res, 'content-range')}`);
        }
        return { res, position: offset, size: range.size };
      }
      // 200: the whole object from its first byte. A server that answers a range this way has none.
      if (asked.Range) ranges = false;
      return { res, position: 0, size: infoOf(res).size };
    }

    let current = await connect();
    const first = infoOf(current.res);
    const info: ObjectInfo = { size: current.size, etag: first.etag, lastModified: first.lastModified };
    expected ??= info.etag || info.lastModified ? { etag: info.etag, lastModified: info.lastModified } : undefined;
    /** Exclusive end of what the caller gets, when known. */
    const stop = info.size === undefined ? (end === undefined ? undefined : end + 1) : Math.min(end === undefined ? Infinity : end + 1, info.size);

    async function* body(): AsyncGenerator<Buffer> {
      let failures = 0;
      try {
        for (;;) {
          let position = current.position;
          let progressed = false;
          try {
            for await (const chunk of chunksOf(current.res, timeoutMs)) {
              const at = position;
              position += chunk.length;
              // A body read again from the start skips what the caller already has.
              if (position <= offset) continue;
              let piece = at < offset ? chunk.subarray(offset - at) : chunk;
              if (stop !== undefined && offset + piece.length > stop) piece = piece.subarray(0, stop - offset);
              if (piece.length > 0) {
                offset += piece.length;
                progressed = true;
                yield piece;
              }
              if (stop !== undefined && offset >= stop) return;
            }
            if (stop === undefined || offset >= stop) return;
            throw ended(offset, stop);
          } catch (error) {
            current.res.destroy();
            failures = progressed ? 1 : failures + 1;
            await transport.recover(error, { method: 'GET', url, attempt: failures, offset, signal });
            current = await connect();
          }
        }
      } finally {
        current.res.destroy();
      }
    }

    return Object.assign(body(), { info });
  }

  return {
    requestUrl: toHttp,
    open,

    async head(url, { signal } = {}) {
      const res = await transport.request('HEAD', url, {}, (s) => s === 200 || s === 404, signal);
      res.destroy();
      return res.statusCode === 404 ? undefined : infoOf(res);
    },

    async get(url, { since, signal, maxBytes = 16 * 1024 * 1024 } = {}) {
      const headers: Record<string, string> = { 'Accept-Encoding': 'identity' };
      // The ETag alone when there is one: Last-Modified counts whole seconds, and a store that
      // weighs both (moto does) would call a pointer re-published within the same second unchanged.
      if (since?.etag) headers['If-None-Match'] = since.etag;
      else if (since?.lastModified) headers['If-Modified-Since'] = since.lastModified;
      for (let attempt = 1; ; attempt += 1) {
        const res = await transport.request('GET', url, headers, (s) => s === 200 || s === 304 || s === 404, signal);
        if (res.statusCode !== 200) {
          res.destroy();
          return { status: res.statusCode === 304 ? 'not-modified' : 'missing' };
        }
        const chunks: Buffer[] = [];
        let size = 0;
        try {
          for await (const chunk of chunksOf(res, timeoutMs)) {
            size += chunk.length;
            if (size > maxBytes) throw new StoreError(`GET ${toHttp(url)}: larger than ${maxBytes} bytes, not a bundle document`);
            chunks.push(chunk);
          }
          const info = infoOf(res);
          if (info.size !== undefined && info.size !== size) throw ended(size, info.size);
          return { status: 'ok', bytes: Buffer.concat(chunks), etag: info.etag, lastModified: info.lastModified };
        } catch (error) {
          res.destroy();
          await transport.recover(error, { method: 'GET', url, attempt, signal });
        }
      }
    },

    async put(url, body, { contentType, signal }) {
      const size = Buffer.isBuffer(body) ? body.length : body.size;
      const res = await transport.request('PUT', url, { 'Content-Type': contentType, 'Content-Length': String(size) }, (s) => s >= 200 && s < 300, signal, body);
      res.destroy();
    },

    async delete(url, { signal } = {}) {
      const res = await transport.request('DELETE', url, {}, (s) => (s >= 200 && s < 300) || s === 404, signal);
      res.destroy();
    },
  };
}
