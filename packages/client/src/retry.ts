/**
 * A `fetch` that waits and asks again where the gateway says to, and only for requests that may
 * be repeated (GET and HEAD: every route of this API is a read; anything else is sent once):
 *
 * - a 429, 503 or 504 with `Retry-After` is asked again after that many seconds;
 * - a request that got no answer (a connection refused or reset) is asked again after 0.5 s,
 *   then 1 s, 2 s …;
 * - an answer whose `RateLimit` field says the client's points are spent (`"default";r=0;t=<s>`)
 *   holds this client's next request until the window renews, instead of spending a 429.
 *
 * At most `retries` times a request, waits capped at `maxWaitMs`; every wait ends with the
 * request's signal. The last answer is returned as it came: the caller turns it into its error.
 */
import { retryAfterOf } from './errors.ts';

export interface RetryOptions {
  /** Times one request is asked again (default 4). */
  retries?: number;
  /** The longest wait before asking again (default 60 s): a longer `Retry-After` is answered as it came. */
  maxWaitMs?: number;
  /** The first wait after no answer at all (default 500 ms; it doubles). */
  backoffMs?: number;
}

const REPEATABLE = new Set(['GET', 'HEAD']);
const RETRIED = new Set([429, 503, 504]);

/** Seconds until this client's points renew when an answer says they are spent, else undefined. */
export function spentFor(response: Response): number | undefined {
  const field = response.headers.get('RateLimit');
  if (!field) return undefined;
  for (const item of field.split(',')) {
    const [name, ...params] = item.trim().split(';');
    if (name !== '"default"') continue;
    const values = Object.fromEntries(params.map((p) => p.trim().split('=') as [string, string]));
    if (values.r === '0' && values.t !== undefined && /^\d+$/.test(values.t)) return Number(values.t);
  }
  return undefined;
}

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
export function wait(ms: number, signal?: AbortSignal | null): Promise<void> {
  if (ms <= 0) return signal?.aborted ? Promise.reject(signal.reason) : Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', stop, { once: true });
  });
}

export function retryingFetch(send: typeof fetch, options: RetryOptions = {}): typeof fetch {
  const { retries = 4, maxWaitMs = 60_000, backoffMs = 500 } = options;
  let heldUntil = 0;
  return async (input, init) => {
    const request = new Request(input, init);
    if (!REPEATABLE.has(request.method)) return send(request);
    for (let attempt = 0; ; attempt += 1) {
      await wait(heldUntil - Date.now(), request.signal);
      let response: Response;
      try {
        response = await send(request.clone());
      } catch (error) {
        if (request.signal.aborted || attempt >= retries) throw error;
        await wait(backoffMs * 2 ** attempt, request.signal);
        continue;
      }
      const spent = spentFor(response);
      if (spent !== undefined) heldUntil = Math.max(heldUntil, Date.now() + Math.min(spent * 1000, maxWaitMs));
      const after = RETRIED.has(response.status) ? retryAfterOf(response) : undefined;
      if (after === undefined || attempt >= retries || after * 1000 > maxWaitMs) return response;
      await response.body?.cancel();
      await wait(after * 1000, request.signal);
    }
  };
}
