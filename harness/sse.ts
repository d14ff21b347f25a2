/**
 * A Server-Sent Events reader for tests, benchmarks and the rehearsal: opens a stream with fetch,
 * parses its events (`id:`, `data:`) and comment lines as they arrive — with the typed client's
 * parser (packages/client/src/sse.ts), the one the client resumes with — and waits, bounded, for
 * what its reader expects.
 */
import { sseMessages } from '../packages/client/src/sse.ts';

export interface SseEvent {
  /** The `id:` field, if the event had one (an id alone moves the resume point). */
  id?: string;
  /** The `data:` field, if any. */
  data?: string;
  /** The `event:` field, if any (`bundle`: the rows after it come from another bundle; not a row). */
  event?: string;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** Every event received, in order (ids alone included). */
  events: SseEvent[];
  comments: string[];
  /** The rows received: each unnamed event with data, parsed. */
  rows(): any[];
  /** The last id received, as EventSource would resume with it. */
  lastId(): string | undefined;
  /** Why the stream broke off, when the server cut it rather than ended it. */
  error?: unknown;
  /** Resolves once the server ended the stream, cut it, or the reader was closed. */
  ended: Promise<void>;
  /** Waits until `test` holds, at most `ms`; throws with `what` otherwise. */
  until(test: (stream: SseStream) => boolean, what: string, ms?: number): Promise<void>;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { Accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of waiters) waiter();
  };
  const stream: SseStream = {
    status: response.status,
    headers: response.headers,
    events,
    comments,
    rows: () => events.filter((e) => e.data !== undefined && e.event === undefined).map((e) => JSON.parse(e.data!)),
    lastId: () => events.findLast((e) => e.id !== undefined)?.id,
    ended: Promise.resolve(),
    async until(test, what, ms = 30_000) {
      if (test(stream)) return;
      await new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!test(stream)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`stream: no ${what} within ${ms} ms (${events.length} events, comments ${JSON.stringify(comments)})`));
        }, ms);
        waiters.add(check);
      });
    },
    close: () => abort.abort(),
  };
  if (!response.ok || !response.body) {
    // Closed before its body was read (an abort): nothing more to wait for.
    stream.ended = response.text().then(
      () => {},
      () => {},
    );
    return stream;
  }
  const body = response.body;
  stream.ended = (async () => {
    try {
      const comment = (text: string) => {
        comments.push(text.trim());
        wake();
      };
      for await (const message of sseMessages(body, comment)) {
        events.push({ ...(message.hasId ? { id: message.lastEventId } : {}), ...(message.data === undefined ? {} : { data: message.data }), ...(message.event === undefined ? {} : { event: message.event }) });
        wake();
      }
    } catch (error) {
      if (!abort.signal.aborted) stream.error = error;
    }
    wake();
  })();
  return stream;
}
