/**
 * Server-Sent Events as the WHATWG HTML standard parses them (§9.2.6): lines end in CRLF, LF or
 * CR; a blank line ends an event; `id:` sets the last event id, which stays until another
 * `id:` sets it. An event of an `id:` alone is yielded too: this API sends one after each load
 * to move the resume point past it (EventSource records it and dispatches nothing). Parsers of
 * the field that dispatch only events with data (eventsource-parser) drop it, so the resume point
 * would stay at the last row matched, however old.
 */

export interface SseMessage {
  /** The last event id once this event was read (an event's own `id:`, or the one before). */
  lastEventId?: string;
  /** The event set an `id:` of its own. */
  hasId: boolean;
  /** `data:` lines joined by `\n`; absent for an event without any. */
  data?: string;
  event?: string;
  /** A `retry:` the event carried (milliseconds). */
  retry?: number;
}

/**
 * The events of a stream's body, in order; comments (`: live`, keep-alives) go to `onComment`.
 * An abort of `signal` ends a read that is waiting, with the signal's reason: Node's fetch does not
 * always error a body it is aborted after (seen on a quiet stream read through a reader), and such
 * a read would wait until the server ends the stream.
 */
export async function* sseMessages(body: ReadableStream<Uint8Array>, onComment?: (text: string) => void, signal?: AbortSignal): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  let lastEventId: string | undefined;
  let message: SseMessage = { hasId: false };
  let fields = 0;
  const reader = body.getReader();
  let finished = false;
  const stop = () => void reader.cancel(signal!.reason).catch(() => {});
  signal?.addEventListener('abort', stop, { once: true });
  try {
    for (;;) {
      signal?.throwIfAborted();
      const { done, value } = await reader.read();
      signal?.throwIfAborted();
      finished = done;
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      const lineEnd = /\r\n|\n|\r/g;
      let at = 0;
      for (let found = lineEnd.exec(buffer); found !== null; found = lineEnd.exec(buffer)) {
        // A CR at the end of what came may be the first half of a CRLF: it waits for the next bytes.
        if (!done && found[0] === '\r' && found.index === buffer.length - 1) break;
        const line = buffer.slice(at, found.index);
        at = lineEnd.lastIndex;
        if (line === '') {
          if (fields > 0) yield { ...message, lastEventId };
          message = { hasId: false };
          fields = 0;
          continue;
        }
        if (line.startsWith(':')) {
          onComment?.(line.slice(1).replace(/^ /, ''));
          continue;
        }
        const colon = line.indexOf(':');
        const name = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (name === 'data') message.data = message.data === undefined ? value : `${message.data}\n${value}`;
        else if (name === 'id' && !value.includes('\0')) {
          lastEventId = value;
          message.hasId = true;
        } else if (name === 'event') message.event = value;
        else if (name === 'retry' && /^\d+$/.test(value)) message.retry = Number(value);
        else continue;
        fields += 1;
      }
      buffer = buffer.slice(at);
      // What is left is an event the stream ended inside of: the standard discards it.
      if (done) return;
    }
  } finally {
    signal?.removeEventListener('abort', stop);
    // A reader that stops early closes the connection.
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
