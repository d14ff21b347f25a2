/**
 * The response cache and single flight of JSON reads. A generation never changes, so
 * the same request gets the same answer until the next alias swap: the answer is kept, encoded,
 * under the live generation and the canonical request — route, query as validated, the encoding
 * negotiated — and a repeat costs no Elasticsearch request, no serialisation and no compression.
 * While the first copy of a request is on its way to Elasticsearch, identical ones wait for its
 * answer instead of sending their own (single flight); an error is shared by the requests that
 * waited and never kept.
 *
 * Memory is bounded in bytes (lru-cache `maxSize`); a swap clears it, and old keys could never
 * match again anyway.
 *
 * A repeat is answered before routing (`answerKnown`): the canonical key is a pure function of
 * the URL (the route it matches, its parameters as validated), so the key a URL was last served
 * under is remembered, and a repeat of that URL is answered without matching the router again,
 * validating its parameters or serialising its key: on a hit those would be a large share of
 * the cost. Only URLs that validated are remembered (a
 * request that failed never reaches the cache).
 *
 * What it does not do: streams (exports, downloads) and non-200 answers pass through; rate
 * limits and admission are decided before (a hit costs the client's budget what a miss does; it
 * never takes an admission slot, reaching no Elasticsearch).
 */
import { promisify } from 'node:util';
import { brotliCompress, constants, deflate, gzip } from 'node:zlib';
import type { Context } from 'koa';
import { LRUCache } from 'lru-cache';
import { routePattern, setRoutePattern } from './route-pattern.ts';
import type { BundleStamp } from './envelope.ts';

/** Encodings a kept answer is stored in, in the order of preference koa-compress uses (zstd aside). */
const ENCODINGS = ['br', 'gzip', 'deflate', 'identity'] as const;
type Encoding = (typeof ENCODINGS)[number];
/** URLs whose keys are remembered (`answerKnown`), and the longest remembered: a few MB of URLs and keys at most. */
const KNOWN_URLS = 4096;
const KNOWN_URL_LENGTH = 512;
/** Below this many bytes an answer is sent as it is (koa-compress's threshold). */
const THRESHOLD = 1024;

const COMPRESS: Record<Exclude<Encoding, 'identity'>, (body: Buffer) => Promise<Buffer>> = {
  br: (body) => promisify(brotliCompress)(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }),
  gzip: (body) => promisify(gzip)(body),
  deflate: (body) => promisify(deflate)(body),
};

/** What a request answered, before encoding, and the generation it read (its ETag's) and that generation's bundle (its headers). */
export interface Answer {
  body: Buffer;
  type: string;
  generation: string | undefined;
  bundle: BundleStamp | undefined;
}

interface Entry extends Answer {
  encoding: Encoding;
}

export interface CacheStats {
  hits: number;
  misses: number;
  /** Requests that waited for an identical one in flight instead of asking Elasticsearch. */
  coalesced: number;
  evictions: number;
  bytes: number;
  entries: number;
}

export interface ResponseCache {
  /**
   * Answers `ctx` from the cache, or from the identical request in flight, or by running `produce`
   * (which sets the body) and keeping what it answered. `key` is the canonical request; the
   * generation and the encoding are added here.
   */
  serve(ctx: Context, generation: string, key: string, produce: () => Promise<void>): Promise<void>;
  /** Whether `url` was served before (its key is remembered): `answerKnown` may answer it. */
  knows(url: string): boolean;
  /** Answers a URL served before from what is kept for `generation`, before routing; false when nothing is (then route it). */
  answerKnown(ctx: Context, generation: string): boolean;
  stats(): CacheStats;
}

/**
 * Negotiated encodings by `Accept-Encoding` text: clients send a handful of spellings, and
 * negotiating one (parse, sort by q) cost a hit more than looking its text up. Emptied when full.
 */
const negotiated = new Map<string, Encoding>();
const NEGOTIATED_SPELLINGS = 256;

/** The encoding a client gets, negotiated as koa-compress does (no header: identity). */
function encodingOf(ctx: Context): Encoding {
  const accepted = ctx.get('Accept-Encoding');
  if (!accepted) return 'identity';
  let encoding = negotiated.get(accepted);
  if (encoding === undefined) {
    encoding = (ctx.acceptsEncodings([...ENCODINGS]) || 'identity') as Encoding;
    if (negotiated.size >= NEGOTIATED_SPELLINGS) negotiated.clear();
    negotiated.set(accepted, encoding);
  }
  return encoding;
}

/** The body a handler set, as bytes; undefined for what is not kept (streams, nothing). */
function bytesOf(body: unknown): Buffer | undefined {
  if (Buffer.isBuffer(body)) return body;
  if (typeof body === 'string') return Buffer.from(body);
  if (body !== null && typeof body === 'object' && typeof (body as { pipe?: unknown }).pipe !== 'function') return Buffer.from(JSON.stringify(body));
  return undefined;
}

/** A produced answer that may be kept: a 200 with a body that is not a stream. */
function answerOf(ctx: Context): Answer | undefined {
  if (ctx.status !== 200) return undefined;
  const body = bytesOf(ctx.body);
  return body && { body, type: ctx.response.get('Content-Type') || 'application/json; charset=utf-8', generation: ctx.state.generation, bundle: ctx.state.bundle };
}

export function createResponseCache(maxBytes: number): ResponseCache {
  const stats = { hits: 0, misses: 0, coalesced: 0, evictions: 0 };
  const cache = new LRUCache<string, Entry>({
    maxSize: maxBytes,
    sizeCalculation: (entry, key) => entry.body.length + key.length * 2 + 100,
    dispose: (_entry, _key, reason) => {
      if (reason === 'evict') stats.evictions += 1;
    },
  });
  const inFlight = new Map<string, Promise<Answer | undefined>>();
  let generationSeen: string | undefined;
  /** URL → the canonical key and route pattern it was served under; emptied when full (URLs carry ids and search text, so they are countless). */
  const known = new Map<string, { key: string; route: string }>();

  /** An answer of a generation (shared by the requests in flight), and an entry: that answer in one encoding. */
  const answerKeyOf = (generation: string, key: string) => `${generation}\u0000${key}`;
  const entryKeyOf = (answerKey: string, encoding: Encoding) => `${answerKey}\u0000${encoding}`;

  async function encode(answer: Answer, encoding: Encoding): Promise<Entry> {
    if (encoding === 'identity' || answer.body.length < THRESHOLD) return { ...answer, encoding: 'identity' };
    return { ...answer, body: await COMPRESS[encoding](answer.body), encoding };
  }

  function send(ctx: Context, entry: Entry): void {
    ctx.status = 200;
    ctx.vary('Accept-Encoding');
    ctx.type = entry.type;
    if (entry.encoding !== 'identity') ctx.set('Content-Encoding', entry.encoding);
    ctx.body = entry.body;
    ctx.state.generation = entry.generation;
    ctx.state.bundle = entry.bundle;
    // Already encoded: the compression middleware must leave it alone.
    ctx.compress = false;
  }

  return {
    async serve(ctx, generation, key, produce) {
      if (generation !== generationSeen) {
        // A swap: nothing kept can be asked for again.
        generationSeen = generation;
        cache.clear();
      }
      if (ctx.url.length <= KNOWN_URL_LENGTH) {
        if (known.size >= KNOWN_URLS) known.clear();
        known.set(ctx.url, { key, route: routePattern(ctx) });
      }
      const answerKey = answerKeyOf(generation, key);
      const encoding = encodingOf(ctx);
      const entryKey = entryKeyOf(answerKey, encoding);
      const kept = cache.get(entryKey);
      if (kept) {
        stats.hits += 1;
        return send(ctx, kept);
      }
      const pending = inFlight.get(answerKey);
      if (pending) {
        stats.coalesced += 1;
        const answer = await pending;
        if (answer) return send(ctx, await keep(entryKey, answer, encoding));
        // The first one's answer was not one to share (not a 200 with a body): ask on our own.
        return produce();
      }
      stats.misses += 1;
      const produced = produce().then(() => answerOf(ctx));
      inFlight.set(answerKey, produced);
      try {
        const answer = await produced;
        if (answer) send(ctx, await keep(entryKey, answer, encoding));
      } finally {
        inFlight.delete(answerKey);
      }
    },
    knows: (url) => known.has(url),
    answerKnown(ctx, generation) {
      const url = known.get(ctx.url);
      // After a swap the kept answers are another generation's: `serve` clears them first.
      const kept = url && generation === generationSeen ? cache.get(entryKeyOf(answerKeyOf(generation, url.key), encodingOf(ctx))) : undefined;
      if (!kept) return false;
      stats.hits += 1;
      setRoutePattern(ctx, url!.route);
      send(ctx, kept);
      return true;
    },
    stats: () => ({ ...stats, bytes: cache.calculatedSize, entries: cache.size }),
  };

  async function keep(entryKey: string, answer: Answer, encoding: Encoding): Promise<Entry> {
    const entry = await encode(answer, encoding);
    cache.set(entryKey, entry);
    return entry;
  }
}
