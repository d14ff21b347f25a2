/**
 * The object store client of the loader and the gateway: HEAD, a small document whole
 * (conditionally: 304 is an answer), a large object as a stream of its stored bytes, PUT and
 * DELETE (the test and bench publisher), for `s3://` URLs (signed with SigV4 by aws4fetch's
 * signer) and plain `http(s)://` URLs (unsigned).
 *
 * Faults that may pass (retry.ts) are retried with backoff inside; a stream that breaks
 * mid-body is resumed where it stopped (`Range: bytes=<offset>-`, with the object's validator
 * as a precondition so a changed object is refused rather than spliced; a server that ignores
 * ranges is read again from its first byte, skipping what was already given). Anything else is
 * one StoreError line naming the URL and the status. A body that stalls (no byte for
 * `timeoutMs` while we wait for one) is a fault; time the caller spends between chunks is not
 * counted, so a slow consumer is never mistaken for a stalled store.
 *
 * Requests go through node:http(s), not fetch: fetch would decode a `Content-Encoding: gzip`
 * behind our back (the stored bytes of a `.jsonl.gz` are what is hashed and resumed) and hides
 * the socket errors retrying depends on. It deliberately does not list buckets: a bundle is
 * found through its manifest, never by listing.
 */
import { createReadStream } from 'node:fs';
import { type IncomingMessage, type OutgoingHttpHeaders, STATUS_CODES, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { AwsV4Signer } from 'aws4fetch';
import type { StoreConfig } from '../config.ts';
import { StoreError, abortOf, describeAnswer } from './errors.ts';
import { requestUrl } from './location.ts';
import { type Validator, parseContentRange, readHeaders } from './ranges.ts';
import { type Backoff, isTransientError, isTransientStatus, parseRetryAfter, retryDelayMs } from './retry.ts';

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

export interface RetryEvent {
  method: string;
  url: string;
  reason: string;
  /** Failures so far (1 = the first retry follows). */
  attempt: number;
  delayMs: number;
  /** Bytes already given to the caller, for a resumed read. */
  offset?: number;
}

export interface ObjectStore {
  /** The http(s) URL a store URL is requested at (what messages name). */
  requestUrl(url: string): string;
  head(url: string, options?: { signal?: AbortSignal }): Promise<ObjectInfo | undefined>;
  get(url: string, options?: { since?: Validator; signal?: AbortSignal; maxBytes?: number }): Promise<Fetched>;
  /** Resolves once the store answered the first request (so a refusal is known before any byte). */
  open(url: string, options?: ReadOptions): Promise<ObjectBody>;
  put(url: string, body: Buffer | { file: string; size: number }, options: { contentType: string; signal?: AbortSignal }): Promise<void>;
  delete(url: string, options?: { signal?: AbortSignal }): Promise<void>;
}

export interface ObjectStoreOptions {
  backoff?: Backoff;
  random?: () => number;
  /** Told of every retry (the loader prints it, the gateway logs it). */
  onRetry?: (event: RetryEvent) => void;
}

type Settings = Pick<StoreConfig, 'credentials' | 'region' | 'endpoint' | 'timeoutMs' | 'attempts'>;

const DEFAULT_SETTINGS: Settings = { credentials: undefined, region: undefined, endpoint: undefined, timeoutMs: 30_000, attempts: 6 };
const DEFAULT_BACKOFF: Backoff = { baseMs: 250, maxMs: 20_000 };
/** Bytes of an error answer read for its `<Code>`. */
const ERROR_BODY_BYTES = 16 * 1024;

function reasonOf(error: unknown): string {
  const { message, code } = error as { message?: string; code?: string };
  return code && !String(message).includes(code) ? `${message} (${code})` : String(message);
}

function stalled(timeoutMs: number, what: string): Error {
  return Object.assign(new Error(`${what} for ${timeoutMs} ms`), { code: 'ETIMEDOUT' });
}

function header(res: IncomingMessage, name: string): string | undefined {
  const value = res.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The chunks of an answer's body; a wait of `timeoutMs` for the next one is a stall. The timer
 * runs only while a chunk is awaited, never while the caller holds one.
 */
async function* chunksOf(res: IncomingMessage, timeoutMs: number): AsyncGenerator<Buffer> {
  const iterator = res[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  for (;;) {
    const next = iterator.next();
    // The losing side of the race must not become an unhandled rejection once the body is destroyed.
    next.catch(() => {});
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(stalled(timeoutMs, 'no byte of the body')), timeoutMs);
    });
    const result = await Promise.race([next, timeout]).finally(() => clearTimeout(timer));
    if (result.done) return;
    yield result.value;
  }
}

/** The `<Code>` of an S3 error body (SignatureDoesNotMatch, NoSuchKey, AccessDenied), if it names one. */
async function errorCode(res: IncomingMessage, timeoutMs: number): Promise<string | undefined> {
  let text = '';
  try {
    for await (const chunk of chunksOf(res, timeoutMs)) {
      text += chunk.toString('utf8');
      if (text.length >= ERROR_BODY_BYTES) break;
    }
  } catch {
    // The status alone still says what went wrong.
  } finally {
    res.destroy();
  }
  return /<Code>([^<]{1,100})<\/Code>/.exec(text)?.[1];
}

export function createObjectStore(config: Partial<Settings> = {}, options: ObjectStoreOptions = {}): ObjectStore {
  const settings: Settings = { ...DEFAULT_SETTINGS, ...config };
  const { backoff = DEFAULT_BACKOFF, random = Math.random, onRetry } = options;
  const { timeoutMs, attempts } = settings;
  const toHttp = (url: string) => requestUrl(url, settings);

  async function signedHeaders(method: string, url: string, target: string, headers: Record<string, string>): Promise<OutgoingHttpHeaders> {
    if (!url.startsWith('s3:')) return headers;
    const key = settings.credentials;
    if (!key) throw new StoreError(`${method} ${target}: s3:// sources need AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`);
    const signer = new AwsV4Signer({ url: target, method, headers, service: 's3', region: settings.region, ...key });
    return Object.fromEntries((await signer.sign()).headers);
  }

  /** One request; resolves with the answer's head. A server silent for `timeoutMs` is a fault. */
  async function exchange(method: string, url: string, headers: Record<string, string>, signal: AbortSignal | undefined, body?: Buffer | { file: string; size: number }): Promise<IncomingMessage> {
    const target = toHttp(url);
    const signed = await signedHeaders(method, url, target, headers);
    return new Promise((resolve, reject) => {
      const req = (target.startsWith('https:') ? httpsRequest : httpRequest)(target, { method, headers: signed, signal }, (res) => {
        // From here the body's own stall timer (chunksOf) applies; the socket's would count a slow reader.
        req.setTimeout(0);
        resolve(res);
      });
      req.setTimeout(timeoutMs, () => req.destroy(stalled(timeoutMs, 'no answer')));
      req.once('error', reject);
      if (body === undefined) req.end();
      else if (Buffer.isBuffer(body)) req.end(body);
      else {
        const file = createReadStream(body.file);
        file.once('error', (error) => req.destroy(error));
        file.pipe(req);
      }
    });
  }

  /**
   * A request retried while the fault may pass; resolves with an answer `accept` takes. Any
   * other answer is a StoreError naming the URL, the status and the store's error code.
   */
  async function answer(
    method: string,
    url: string,
    headers: Record<string, string>,
    accept: (status: number) => boolean,
    signal: AbortSignal | undefined,
    body?: Buffer | { file: string; size: number },
  ): Promise<IncomingMessage> {
    const shown = toHttp(url);
    for (let attempt = 1; ; attempt += 1) {
      let reason: string;
      let retryAfterMs: number | undefined;
      try {
        const res = await exchange(method, url, headers, signal, body);
        const status = res.statusCode ?? 0;
        if (accept(status)) return res;
        // The standard phrase, not the server's spelling of it (moto says FORBIDDEN).
        const phrase = STATUS_CODES[status];
        if (!isTransientStatus(status)) {
          const code = method === 'HEAD' ? undefined : await errorCode(res, timeoutMs);
          res.destroy();
          throw new StoreError(describeAnswer(method, shown, status, phrase, code), { status, code });
        }
        res.destroy();
        if (attempt >= attempts) throw new StoreError(`${describeAnswer(method, shown, status, phrase)}, after ${attempt} attempts`, { status, transient: true });
        reason = `${status} ${phrase ?? ''}`.trim();
        retryAfterMs = parseRetryAfter(header(res, 'retry-after'), Date.now());
      } catch (error) {
        if (error instanceof StoreError) throw error;
        if (abortOf(error, signal)) throw abortOf(error, signal);
        if (!isTransientError(error)) throw new StoreError(`${method} ${shown}: ${reasonOf(error)}`);
        if (attempt >= attempts) throw new StoreError(`${method} ${shown}: ${reasonOf(error)}, after ${attempt} attempts`, { transient: true });
        reason = reasonOf(error);
      }
      const delayMs = retryDelayMs(attempt, backoff, random, retryAfterMs);
      onRetry?.({ method, url: shown, reason, attempt, delayMs });
      await sleep(delayMs, undefined, { signal });
    }
  }

  function infoOf(res: IncomingMessage): ObjectInfo {
    const length = header(res, 'content-length');
    return { size: length === undefined ? undefined : Number(length), etag: header(res, 'etag'), lastModified: header(res, 'last-modified') };
  }

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
        res = await answer('GET', url, { 'Accept-Encoding': 'identity', ...asked }, (s) => s === 200 || s === 206, signal);
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
              // A body re-read from the start skips what the caller already has.
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
            throw Object.assign(new Error(`the body ended after ${offset} of ${stop} bytes`), { code: 'ECONNRESET' });
          } catch (error) {
            current.res.destroy();
            if (error instanceof StoreError) throw error;
            if (abortOf(error, signal)) throw abortOf(error, signal);
            if (!isTransientError(error)) throw new StoreError(`GET ${shown}: ${reasonOf(error)} at byte ${offset}`);
            // A read that made progress starts its count again: only failures in a row are bounded.
            failures = progressed ? 1 : failures + 1;
            if (failures >= attempts) throw new StoreError(`GET ${shown}: ${reasonOf(error)} at byte ${offset}, after ${failures} attempts`, { transient: true });
            const delayMs = retryDelayMs(failures, backoff, random);
            onRetry?.({ method: 'GET', url: shown, reason: reasonOf(error), attempt: failures, delayMs, offset });
            await sleep(delayMs, undefined, { signal });
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

    async head(url, { signal } = {}) {
      const res = await answer('HEAD', url, {}, (s) => s === 200 || s === 404, signal);
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
        const res = await answer('GET', url, headers, (s) => s === 200 || s === 304 || s === 404, signal);
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
          if (info.size !== undefined && info.size !== size) throw Object.assign(new Error(`the body ended after ${size} of ${info.size} bytes`), { code: 'ECONNRESET' });
          return { status: 'ok', bytes: Buffer.concat(chunks), etag: info.etag, lastModified: info.lastModified };
        } catch (error) {
          res.destroy();
          if (error instanceof StoreError) throw error;
          if (abortOf(error, signal)) throw abortOf(error, signal);
          if (!isTransientError(error)) throw new StoreError(`GET ${toHttp(url)}: ${reasonOf(error)}`);
          if (attempt >= attempts) throw new StoreError(`GET ${toHttp(url)}: ${reasonOf(error)}, after ${attempt} attempts`, { transient: true });
          const delayMs = retryDelayMs(attempt, backoff, random);
          onRetry?.({ method: 'GET', url: toHttp(url), reason: reasonOf(error), attempt, delayMs });
          await sleep(delayMs, undefined, { signal });
        }
      }
    },

    open,

    async put(url, body, { contentType, signal }) {
      const size = Buffer.isBuffer(body) ? body.length : body.size;
      const res = await answer('PUT', url, { 'Content-Type': contentType, 'Content-Length': String(size) }, (s) => s >= 200 && s < 300, signal, body);
      res.destroy();
    },

    async delete(url, { signal } = {}) {
      const res = await answer('DELETE', url, {}, (s) => (s >= 200 && s < 300) || s === 404, signal);
      res.destroy();
    },
  };
}
