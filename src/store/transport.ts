/**
 * One request to a store: signed with SigV4 (aws4fetch's signer) for `s3://`, plain for
 * `http(s)://`, retried with backoff while the fault may pass (retry.ts), else one StoreError
 * line naming the URL, the status and the store's error code. Also the reading of an answer's
 * body with a stall timer, and the rule every caller applies after a fault of a body.
 *
 * node:http(s), not fetch: fetch would decode a `Content-Encoding: gzip` behind our back (the
 * stored bytes of a `.jsonl.gz` are what is hashed and resumed) and hides the socket errors
 * retrying depends on. It knows nothing of objects, ranges or resuming (object-store.ts).
 */
import { createReadStream } from 'node:fs';
import { type IncomingMessage, type OutgoingHttpHeaders, STATUS_CODES, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { AwsV4Signer } from 'aws4fetch';
import type { StoreConfig } from '../config.ts';
import { StoreError, abortOf, describeAnswer } from './errors.ts';
import { requestUrl } from './location.ts';
import { type Backoff, isTransientError, isTransientStatus, parseRetryAfter, retryDelayMs } from './retry.ts';

export type StoreSettings = Pick<StoreConfig, 'credentials' | 'region' | 'endpoint' | 'timeoutMs' | 'attempts'>;

/** What a PUT sends: bytes, or a file streamed (opened again for each attempt). */
export type RequestBody = Buffer | { file: string; size: number };

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

export interface TransportOptions {
  backoff?: Backoff;
  random?: () => number;
  /** Told of every retry (the loader prints it, the gateway logs it). */
  onRetry?: (event: RetryEvent) => void;
}

export interface Transport {
  readonly timeoutMs: number;
  /** The http(s) URL a store URL is requested at (what messages name). */
  toHttp(url: string): string;
  /** An answer `accept` takes, asking again while the fault may pass. */
  request(method: string, url: string, headers: Record<string, string>, accept: (status: number) => boolean, signal?: AbortSignal, body?: RequestBody): Promise<IncomingMessage>;
  /**
   * After a fault of a body: throws when it is final (a refusal, the caller's abort, a fault that
   * will not pass, the last attempt), else waits before the caller asks again.
   */
  recover(error: unknown, fault: { method: string; url: string; attempt: number; offset?: number; signal?: AbortSignal }): Promise<void>;
}

const DEFAULT_SETTINGS: StoreSettings = { credentials: undefined, region: undefined, endpoint: undefined, timeoutMs: 30_000, attempts: 6 };
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

export function header(res: IncomingMessage, name: string): string | undefined {
  const value = res.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The chunks of an answer's body; a wait of `timeoutMs` for the next one is a stall. The timer
 * runs only while a chunk is awaited, never while the caller holds one: a slow consumer (a bulk
 * request, a slow client of the gateway) is not a stalled store.
 */
export async function* chunksOf(res: IncomingMessage, timeoutMs: number): AsyncGenerator<Buffer> {
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

export function createTransport(config: Partial<StoreSettings> = {}, options: TransportOptions = {}): Transport {
  const settings: StoreSettings = { ...DEFAULT_SETTINGS, ...config };
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

  /** One exchange; resolves with the answer's head. A server silent for `timeoutMs` is a fault. */
  async function exchange(method: string, url: string, headers: Record<string, string>, signal: AbortSignal | undefined, body?: RequestBody): Promise<IncomingMessage> {
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
        // A request that fails midway unpipes the file, which `pipe` would leave open.
        req.once('close', () => file.destroy());
        file.pipe(req);
      }
    });
  }

  async function pause(event: Omit<RetryEvent, 'delayMs'>, signal: AbortSignal | undefined, retryAfterMs?: number): Promise<void> {
    const delayMs = retryDelayMs(event.attempt, backoff, random, retryAfterMs);
    onRetry?.({ ...event, delayMs });
    await sleep(delayMs, undefined, { signal });
  }

  async function recover(error: unknown, { method, url, attempt, offset, signal }: Parameters<Transport['recover']>[1]): Promise<void> {
    if (error instanceof StoreError) throw error;
    const abort = abortOf(error, signal);
    if (abort) throw abort;
    const shown = toHttp(url);
    const at = offset === undefined ? '' : ` at byte ${offset}`;
    if (!isTransientError(error)) throw new StoreError(`${method} ${shown}: ${reasonOf(error)}${at}`);
    if (attempt >= attempts) throw new StoreError(`${method} ${shown}: ${reasonOf(error)}${at}, after ${attempt} attempts`, { transient: true });
    await pause({ method, url: shown, reason: reasonOf(error), attempt, offset }, signal);
  }

  return {
    timeoutMs,
    toHttp,
    recover,
    async request(method, url, headers, accept, signal, body) {
      const shown = toHttp(url);
      for (let attempt = 1; ; attempt += 1) {
        let res: IncomingMessage;
        try {
          res = await exchange(method, url, headers, signal, body);
        } catch (error) {
          await recover(error, { method, url, attempt, signal });
          continue;
        }
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
        await pause({ method, url: shown, reason: `${status} ${phrase ?? ''}`.trim(), attempt }, signal, parseRetryAfter(header(res, 'retry-after'), Date.now()));
      }
    },
  };
}
