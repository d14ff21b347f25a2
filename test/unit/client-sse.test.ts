/**
 * The client's Server-Sent Events parser against the WHATWG standard's rules, fed in every
 * possible split of the bytes: CRLF, LF and CR line ends (a CRLF split across reads included),
 * an `id:` that stays until the next, an event of an id alone, comments, `retry:`, an event the
 * stream ends inside of, and several data lines.
 */
import { describe, expect, it } from 'vitest';
import { type SseMessage, sseMessages } from '../../packages/client/src/sse.ts';

function bodyOf(parts: readonly string[]): ReadableStream<Uint8Array> {
  const bytes = parts.map((part) => new TextEncoder().encode(part));
  return new ReadableStream({
    pull(controller) {
      const next = bytes.shift();
      if (next) controller.enqueue(next);
      else controller.close();
    },
  });
}

async function read(parts: readonly string[]): Promise<{ messages: SseMessage[]; comments: string[] }> {
  const messages: SseMessage[] = [];
  const comments: string[] = [];
  for await (const message of sseMessages(bodyOf(parts), (text) => comments.push(text))) messages.push(message);
  return { messages, comments };
}

const STREAM = ': live\r\nid: a1\r\ndata: {"id":"x"}\r\n\r\nid: a2\n\ndata: one\ndata: two\n\nretry: 2500\rid: a3\rdata: z\r\r: keep-alive\nid: half\ndata: never';
const EXPECTED: SseMessage[] = [
  { hasId: true, lastEventId: 'a1', data: '{"id":"x"}' },
  { hasId: true, lastEventId: 'a2' },
  { hasId: false, lastEventId: 'a2', data: 'one\ntwo' },
  { hasId: true, lastEventId: 'a3', data: 'z', retry: 2500 },
];

describe('sseMessages', () => {
  it('reads the events, ids alone included, the last id kept until another is set', async () => {
    const { messages, comments } = await read([STREAM]);
    expect(messages).toEqual(EXPECTED);
    expect(comments).toEqual(['live', 'keep-alive']);
  });

  it('reads the same whatever the bytes are split into (a CRLF split between two reads included)', async () => {
    for (let cut = 1; cut < STREAM.length; cut++) {
      const { messages } = await read([STREAM.slice(0, cut), STREAM.slice(cut)]);
      expect(messages, `split at ${cut}`).toEqual(EXPECTED);
    }
    const { messages } = await read([...STREAM]);
    expect(messages).toEqual(EXPECTED);
  });

  it('decodes UTF-8 split between reads', async () => {
    const bytes = new TextEncoder().encode('data: Łódź ✓\n\n');
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const byte of bytes) controller.enqueue(Uint8Array.of(byte));
        controller.close();
      },
    });
    const messages: SseMessage[] = [];
    for await (const message of sseMessages(body)) messages.push(message);
    expect(messages).toEqual([{ hasId: false, data: 'Łódź ✓' }]);
  });

  it('ignores an id holding NUL and fields it does not know', async () => {
    const { messages } = await read(['id: ok\n\nid: bad\0\nfoo: bar\ndata: d\n\nfoo: only\n\n']);
    expect(messages).toEqual([
      { hasId: true, lastEventId: 'ok' },
      { hasId: false, lastEventId: 'ok', data: 'd' },
    ]);
  });

  it('ends a read that waits on a quiet body once its signal aborts, with the signal’s reason, and lets the body go', async () => {
    // A body that sends one event and then nothing, and is never errored: what Node's fetch leaves
    // a client reading when it is aborted after the answer came.
    let cancelled: unknown;
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(new TextEncoder().encode('data: first\n\n')),
      cancel: (reason) => void (cancelled = reason),
    });
    const stop = new AbortController();
    const got: SseMessage[] = [];
    const reading = (async () => {
      for await (const message of sseMessages(body, undefined, stop.signal)) got.push(message);
    })();
    // Aborted while the next read waits.
    setTimeout(() => stop.abort(new Error('stopped by the reader')), 20);
    await expect(reading).rejects.toThrow('stopped by the reader');
    expect(got).toEqual([{ hasId: false, data: 'first' }]);
    expect(cancelled).toBeInstanceOf(Error);
    expect(body.locked).toBe(false);
  });
});
