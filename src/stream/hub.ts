/**
 * The event streams of one process (`/v1/killmails/stream`, `/v1/events/stream`): who is
 * connected, and what each has been sent.
 *
 * Each stream stands at a position in the order rows became visible (./resume-token.ts). A new
 * stream first catches up on its own: it walks, in the generation the hub holds as live, the
 * rows of its filters after its position (none for a stream that starts now), then joins the
 * group of streams with the same filters. If a new generation went live meanwhile it walks that
 * one too before joining, so no row falls between its walk and the group's.
 *
 * One watcher per process reads the live generation every half second (the search service
 * reads Elasticsearch at most once a second for it, shared with every request). When it
 * changes, each group is walked once — the rows first held after the previous generation's
 * instant, in the order they became visible — and every page is written to every stream of the
 * group as one shared buffer. A stream is only sent rows after its own position, so a row
 * reaches it once whichever walk finds it first. After a walk, each stream is sent an id alone
 * (no data: EventSource keeps it as the last event id, nothing is dispatched): the instant of
 * the generation it has now seen whole, so a stream whose filters matched nothing still resumes
 * from there. Processes share nothing: with several workers each watches on its own.
 *
 * Limits: open streams per client and in all (refused with 429 and 503); a stream whose unsent
 * bytes pass `bufferBytes`, or that takes no bytes for `STALL_MS` while the walk waits for it,
 * is cut — the gateway never holds more than that for a reader that does not read. A comment
 * line every 15 s keeps proxies from closing idle streams. `close()` (shutdown) ends every
 * stream at once: clients reconnect elsewhere with their last id.
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { ApiError } from '../errors.ts';
import { bundleFields, bundleHeaderFields, bundleOf } from '../http/envelope.ts';
import type { GenerationDoc } from '../indices/generation.ts';
import { INSTANT_MIN, toInstant } from '../time/instant.ts';
import { type ListQuery, toListBody } from '../query/list.ts';
import { throughGeneration } from '../query/timeline.ts';
import type { TimeBound } from '../query/time-range.ts';
import type { RawPage } from '../search/raw-hits.ts';
import type { Reader, SearchService } from '../search/search-service.ts';
import { type Ticket, UNADMITTED, ticketOf } from '../limits/admission.ts';
import { type Holds, localHolds } from '../limits/holds.ts';
import { type Position, encodeResumeToken, isAfter, rowPosition, searchAfter } from './resume-token.ts';

/** Rows read per search of a walk: the bytes one page holds in memory, shared by the streams it is written to. */
export const STREAM_PAGE = 200;
/** The comment line that keeps idle streams open through proxies. */
export const HEARTBEAT_MS = 15_000;
/** How often the live generation is looked at (the search service caches it for a second). */
export const WATCH_MS = 500;
/** How long a walk waits for a stream to take what it was sent before cutting it. */
export const STALL_MS = 10_000;
/** Groups walked at once after a swap: bounded, so a thousand filters never make a thousand searches at once. */
const WALKS_AT_ONCE = 4;
/** What EventSource waits before reconnecting (the field `retry:`). */
const RETRY_MS = 1000;
/** What a client holds while a stream is open (src/workers/holds.ts). */
const STREAMS = 'streams';

/** What a stream reads: its index, the key of its filters, and its list query after a bound. */
export interface Feed {
  index: 'killmails' | 'events';
  /** Streams with equal keys have equal filters and are walked together (`cursorScope` of the route and filters). */
  key: string;
  /** The rows of the stream's filters first held after `since` (the later of it and the client's `since_indexed`), in `indexedAt:asc` order. */
  query(since: TimeBound | undefined, currentCycle: number): ListQuery;
  /** `include=removed`: the rows that left and changed too (src/indices/changes.ts). */
  withChanges?: boolean;
}

export interface OpenRequest {
  /** The client as the rate limit names it (src/limits/client-identity.ts). */
  client: string;
  feed: Feed;
  /** Where the stream starts: after this position; undefined: from now (the live generation). */
  start: Position | undefined;
  res: ServerResponse;
  /** Called once the stream is admitted, before its head is written, with the streams the client held before it. */
  admitted?(held: number): void;
}

export interface StreamStats {
  open: number;
  /** Streams cut because their reader did not take what it was sent. */
  cut: number;
}

export interface StreamHub {
  /**
   * Answers `res` as an event stream: rejects (before any byte is written) with a 429 when the
   * client has its cap of streams open (across the gateway's workers: `holds`), a 503
   * `overloaded` at the process's cap.
   */
  open(request: OpenRequest): Promise<void>;
  stats(): StreamStats;
  /** Ends every stream and stops watching (shutdown). */
  close(): void;
}

export interface StreamHubOptions {
  search: SearchService;
  cursorSecret: string;
  logger: Logger;
  /** Open streams one client may hold in the whole gateway. */
  perClient: number;
  /** Where a client's open streams are counted (default: in this process; with workers, the primary's: src/workers/holds.ts). */
  holds?: Holds;
  /** Open streams in this process. */
  max: number;
  /** Unsent bytes past which a stream is cut. */
  bufferBytes: number;
  /** Tests shorten these. */
  heartbeatMs?: number;
  watchMs?: number;
  stallMs?: number;
}

interface Stream {
  client: string;
  /** Its own walk (catching up) is its client's request to Elasticsearch. */
  ticket: Ticket;
  feed: Feed;
  res: ServerResponse;
  /** Everything up to here was sent (undefined until the stream knows where "now" is). */
  position: Position | undefined;
  /** In its feed's group: walks after a swap write to it. */
  joined: boolean;
  closed: boolean;
  /** The bundle the stream last said its rows come from (its headers, then `bundle` events). */
  bundle: string | undefined;
}

interface Group {
  feed: Feed;
  streams: Set<Stream>;
}

/** A walk's page as bytes: the events of its rows, where each begins, and each row's position. */
interface EventPage {
  bytes: Buffer;
  starts: number[];
  positions: Position[];
}

/** A generation's first-seen instant as nine-digit text (generations loaded before first-seen instants have none). */
const instantOf = (generation: GenerationDoc) => toInstant(generation.indexedAt)?.text;
const sinceBound = (instant: string): TimeBound => ({ at: instant, onNanosecond: true });
const HEARTBEAT = Buffer.from(':\n\n');

export function createStreamHub(options: StreamHubOptions): StreamHub {
  const { search, cursorSecret, logger, perClient, max, bufferBytes, heartbeatMs = HEARTBEAT_MS, watchMs = WATCH_MS, stallMs = STALL_MS, holds = localHolds() } = options;
  const streams = new Set<Stream>();
  const groups = new Map<string, Group>();
  let cut = 0;
  /** The generation the groups were last walked in (undefined while no stream is open). */
  let live: GenerationDoc | undefined;
  let ready: Promise<GenerationDoc | undefined> | undefined;
  let watcher: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let walking = false;
  let closed = false;

  const token = (position: Position, feed: Feed) => encodeResumeToken(position, feed.index, cursorSecret);

  /** A row's bytes as one `data:` line: an exported line holds no line break, but a stored row is not trusted to. */
  const dataLine = (row: Buffer) => (row.includes(10) || row.includes(13) ? Buffer.from(JSON.stringify(JSON.parse(row.toString('utf8')))) : row);

  function toEvents(page: RawPage['hits'], feed: Feed): EventPage {
    const chunks: Buffer[] = [];
    const starts: number[] = [];
    const positions: Position[] = [];
    let length = 0;
    for (const hit of page) {
      const position = rowPosition(JSON.parse(hit.sort!.toString('utf8')) as unknown[]);
      const head = Buffer.from(`id: ${token(position, feed)}\ndata: `);
      const data = dataLine(hit.row);
      starts.push(length);
      positions.push(position);
      chunks.push(head, data, Buffer.from('\n\n'));
      length += head.length + data.length + 2;
    }
    return { bytes: Buffer.concat(chunks, length), starts, positions };
  }

  function end(stream: Stream): void {
    if (stream.closed) return;
    stream.closed = true;
    stream.res.end();
  }

  function cutStream(stream: Stream, why: string): void {
    if (stream.closed) return;
    stream.closed = true;
    cut += 1;
    logger.info({ client: stream.client, buffered: stream.res.writableLength, why }, 'stream cut');
    stream.res.destroy();
  }

  /**
   * Writes to a stream, unless its unsent bytes already pass the bound: it is cut instead. So a
   * stream holds at most the bound and one page. False when the stream is gone.
   */
  function write(stream: Stream, bytes: Buffer): boolean {
    if (stream.closed || stream.res.destroyed) return false;
    if (stream.res.writableLength > bufferBytes) {
      cutStream(stream, 'buffer');
      return false;
    }
    stream.res.write(bytes);
    return true;
  }

  /** Waits until the stream took what it was sent (or is gone); cuts it after `stallMs`. */
  async function drained(stream: Stream): Promise<void> {
    if (stream.closed || !stream.res.writableNeedDrain) return;
    const { res } = stream;
    let timer: NodeJS.Timeout | undefined;
    const gone = await new Promise<boolean>((resolve) => {
      const done = (stalled: boolean) => {
        clearTimeout(timer);
        res.off('drain', onDrain).off('close', onClose);
        resolve(stalled);
      };
      const onDrain = () => done(false);
      const onClose = () => done(false);
      res.once('drain', onDrain).once('close', onClose);
      timer = setTimeout(() => done(true), stallMs);
    });
    if (gone) cutStream(stream, 'stalled');
  }

  /**
   * Before the rows of another bundle than the stream last named: an event of its own, `event:
   * bundle` with `{bundleId, bundleGeneratedAt}` and no `id` (the resume point stays where it
   * is). EventSource's `onmessage` and the typed client's rows pass it by: it is not a row.
   */
  function announce(stream: Stream, generation: GenerationDoc): void {
    if (stream.bundle === generation.bundleId) return;
    stream.bundle = generation.bundleId;
    write(stream, Buffer.from(`event: bundle\ndata: ${JSON.stringify(bundleFields(bundleOf(generation)))}\n\n`));
  }

  /** Sends the rows of `page` after the stream's position: the whole shared buffer, or its tail. */
  function sendPage(stream: Stream, page: EventPage): boolean {
    const position = stream.position;
    let first = 0;
    if (position) while (first < page.positions.length && !isAfter(page.positions[first]!, position)) first += 1;
    if (first === page.positions.length) return !stream.closed;
    if (!write(stream, first === 0 ? page.bytes : page.bytes.subarray(page.starts[first]!))) return false;
    stream.position = page.positions.at(-1);
    return true;
  }

  /** After a generation was walked whole for a stream: its id becomes that generation's instant (if later). */
  function checkpoint(stream: Stream, generation: GenerationDoc): void {
    const position: Position = { indexedAt: instantOf(generation) ?? INSTANT_MIN };
    if (stream.position && !isAfter(position, stream.position)) return;
    stream.position = position;
    write(stream, Buffer.from(`id: ${token(position, stream.feed)}\n\n`));
  }

  /**
   * Every row of `feed` in `reader`'s generation after `position` (a row, or an instant) and
   * after `since`, a page at a time, handed to `deliver`; stops when `deliver` answers false.
   */
  async function walk(reader: Reader, feed: Feed, position: Position | undefined, since: string | undefined, deliver: (page: EventPage) => Promise<boolean>): Promise<void> {
    const bound = [since, position?.row ? undefined : position?.indexedAt].filter((x) => x !== undefined).sort().at(-1);
    const rows = feed.query(bound === undefined ? undefined : sinceBound(bound), reader.generation.currentCycle);
    const list = feed.withChanges ? throughGeneration(rows, reader.generation.indexedAt) : rows;
    let after = position && searchAfter(position);
    for (;;) {
      const { hits } = await reader.searchRows(feed.index, toListBody({ ...list, limit: STREAM_PAGE, after, count: false }), { withChanges: feed.withChanges });
      const page = hits.slice(0, STREAM_PAGE);
      if (page.length > 0 && !(await deliver(toEvents(page, feed)))) return;
      if (hits.length <= STREAM_PAGE) return;
      after = JSON.parse(page.at(-1)!.sort!.toString('utf8')) as string[];
    }
  }

  function join(stream: Stream): void {
    let group = groups.get(stream.feed.key);
    if (!group) groups.set(stream.feed.key, (group = { feed: stream.feed, streams: new Set() }));
    group.streams.add(stream);
    stream.joined = true;
  }

  function leave(stream: Stream): void {
    if (!streams.delete(stream)) return;
    holds.give(STREAMS, stream.client);
    const group = groups.get(stream.feed.key);
    group?.streams.delete(stream);
    if (group?.streams.size === 0) groups.delete(stream.feed.key);
    if (streams.size === 0) stopWatching();
  }

  /** A stream's own walk up to the generation the groups stand at, then into its group. */
  async function catchUp(stream: Stream): Promise<void> {
    let generation = live ?? (await ready);
    for (;;) {
      if (stream.closed) return;
      if (!generation) throw ApiError.unavailable('No registry bundle is loaded yet.');
      announce(stream, generation);
      // From now: nothing of this generation is new to the stream.
      if (stream.position === undefined) checkpoint(stream, generation);
      else {
        const reader = await search.reader(stream.ticket, generation.generation);
        await walk(reader, stream.feed, stream.position, undefined, async (page) => {
          if (!sendPage(stream, page)) return false;
          await drained(stream);
          return !stream.closed;
        });
        if (stream.closed) return;
        checkpoint(stream, generation);
      }
      // A swap during the walk: the groups were walked in a generation this stream has not seen whole.
      if (live && live.generation !== generation.generation) {
        generation = live;
        continue;
      }
      join(stream);
      write(stream, Buffer.from(': live\n\n'));
      return;
    }
  }

  /** Walks a group's rows new to `generation` (first held after `previous`) into each of its streams. */
  async function walkGroup(group: Group, generation: GenerationDoc, previous: GenerationDoc): Promise<void> {
    try {
      // Walks are the gateway's own work, not a client's: never refused by admission control.
      const reader = await search.reader(UNADMITTED, generation.generation);
      for (const stream of group.streams) if (stream.joined) announce(stream, generation);
      await walk(reader, group.feed, undefined, instantOf(previous), async (page) => {
        const sent = [...group.streams].filter((stream) => stream.joined && sendPage(stream, page));
        await Promise.all(sent.map(drained));
        return group.streams.size > 0;
      });
      for (const stream of group.streams) if (stream.joined) checkpoint(stream, generation);
    } catch (error) {
      // Rows were lost to these streams: they end, and resume from their last id.
      logger.warn({ err: error, generation: generation.generation }, 'stream walk failed: ending its streams');
      for (const stream of group.streams) end(stream);
    }
  }

  /** One look at the live generation; on a swap, every group is walked. */
  async function watch(): Promise<void> {
    if (walking || !live) return;
    walking = true;
    try {
      const now = await search.live().catch(() => undefined);
      if (!now || !live || now.generation === live.generation) return;
      const previous = live;
      live = now;
      const pending = [...groups.values()];
      const next = async (): Promise<void> => {
        const group = pending.shift();
        if (!group) return;
        await walkGroup(group, now, previous);
        return next();
      };
      await Promise.all(Array.from({ length: WALKS_AT_ONCE }, next));
    } finally {
      walking = false;
    }
  }

  function startWatching(): void {
    if (watcher) return;
    ready = search.live().then((generation) => (live = generation));
    ready.catch(() => (ready = undefined));
    watcher = setInterval(() => void watch().catch((error) => logger.warn({ err: error }, 'stream watcher failed')), watchMs).unref();
    heartbeat = setInterval(() => {
      for (const stream of streams) write(stream, HEARTBEAT);
    }, heartbeatMs).unref();
  }

  function stopWatching(): void {
    clearInterval(watcher);
    clearInterval(heartbeat);
    watcher = heartbeat = undefined;
    live = undefined;
    ready = undefined;
  }

  return {
    async open({ client, feed, start, res, admitted }) {
      if (closed) throw ApiError.unavailable('The gateway is stopping.', 1);
      if (streams.size >= max) throw ApiError.overloaded(5);
      const held = await holds.take(STREAMS, client, perClient);
      if (held === undefined) throw ApiError.rateLimited(`This client already has ${perClient} streams open; close one, or retry later.`, 5);
      // Checked again: the hub may have closed, or filled, while the hold was asked for.
      if (closed || streams.size >= max) {
        holds.give(STREAMS, client);
        throw closed ? ApiError.unavailable('The gateway is stopping.', 1) : ApiError.overloaded(5);
      }
      const stream: Stream = { client, ticket: ticketOf(client), feed, res, position: start, joined: false, closed: false, bundle: undefined };
      streams.add(stream);
      admitted?.(held);
      startWatching();
      res.once('close', () => {
        stream.closed = true;
        leave(stream);
      });
      // The bundle its first rows come from, as every answer read from a generation names it.
      const at = live ?? (await (ready ?? search.live()).catch(() => undefined));
      if (stream.closed) return;
      const bundle = at && bundleOf(at);
      stream.bundle = bundle?.bundleId;
      res.writeHead(200, {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-store',
        'X-Accel-Buffering': 'no',
        ...(bundle && bundleHeaderFields(bundle)),
      });
      res.socket?.setNoDelay(true);
      write(stream, Buffer.from(`retry: ${RETRY_MS}\n\n`));
      void catchUp(stream).catch((error) => {
        logger.warn({ err: error }, 'stream catch-up failed: ending the stream');
        if (!stream.closed) write(stream, Buffer.from(`: ${error instanceof ApiError ? error.code : 'internal_error'}\n\n`));
        end(stream);
      });
    },
    stats: () => ({ open: streams.size, cut }),
    close() {
      closed = true;
      for (const stream of [...streams]) {
        // A reader that is not reading would hold the connection until the shutdown deadline.
        if (stream.res.writableLength > 0) cutStream(stream, 'shutdown');
        else end(stream);
      }
      stopWatching();
    },
  };
}
