/**
 * `/v1/exports/{file}`: the live generation's bundle files, streamed from the immutable copy
 * the loader kept for that generation (a reload never serves a mix of two bundles) — or, for a
 * generation loaded from an object store, from its store folder (`exportBase`), streamed through
 * the gateway: any number of gateways on any machine serve the same bytes without a shared disk,
 * from a private bucket too (a redirect would need public or presigned URLs, and would hand the
 * client the store's own caching and errors instead of this route's ETag, ranges and gzip rules).
 *
 * - Only the specification's 17 names and the `.jsonl.gz` twins of the row files; the
 *   reference's `sui_*` names are aliases. Anything else is 404, and no request names a path:
 *   the file is looked up in the generation's file list.
 * - A `.jsonl` published only as `.jsonl.gz` is served from the `.jsonl` URL with
 *   `Content-Encoding: gzip` to clients that accept gzip, and decompressed for the others
 *   (the reference sent gzip whatever the client said).
 * - Strong `ETag` from the manifest's sha256, `Last-Modified` = the bundle's `generatedAt`,
 *   304 on `If-None-Match`/`If-Modified-Since`, single byte ranges (206/416) of files sent as
 *   stored (a `.jsonl` sent gzip-encoded or decompressed is sent whole), HEAD.
 * - While Elasticsearch cannot be reached, the files of the last live generation this gateway
 *   read keep being served: they are on local disk or in the store and never change. (Only the
 *   live lookup needs ES; the JSON routes answer 503 meanwhile.)
 * - From a store, every read carries the ETag recorded at load time as `If-Match`: an object
 *   replaced since (a flat `latest/` layout re-published) is a 404, never another bundle's
 *   bytes under this ETag. A read that breaks mid-body is resumed inside (src/store), unseen by
 *   the client; a store that stays away is a 503.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable, pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { INDICES, OPS_DOCUMENTS } from '../indices/all.ts';
import type { GenerationDoc, GenerationFile } from '../indices/generation.ts';
import { notModified } from '../http/conditional.ts';
import { ApiError } from '../errors.ts';
import { parseRange } from '../http/range.ts';
import type { Ticket } from '../limits/admission.ts';
import { EXPORT_HEADERS } from '../query/route-parameters.ts';
import type { SearchService } from '../search/search-service.ts';
import { StoreError } from '../store/errors.ts';
import { resolveStoreUrl } from '../store/location.ts';
import { type ObjectStore, createObjectStore } from '../store/object-store.ts';
import { type AppContext, type AppRouter, type RouteDeps, noteRead, pinnedGeneration } from './context.ts';
import { route } from './operation.ts';

/**
 * Every servable name (besides manifest.json) → the names the bundle may store that file
 * under, read from the index descriptions and the ops document list, so the reference's
 * `sui_*` spellings are the same aliases the loader accepts.
 */
const EXPORTS = new Map<string, readonly string[]>([
  ['catalog.json', ['catalog.json']],
  ...Object.values(OPS_DOCUMENTS).flatMap((names) => names.map((name) => [name, names] as const)),
  ...INDICES.flatMap(({ files }) => files.map((stem) => [`${stem}.jsonl`, files.map((f) => `${f}.jsonl`)] as const)),
]);
const NDJSON = 'application/x-ndjson; charset=utf-8';
const CACHE_CONTROL = 'public, max-age=60, s-maxage=300';

/** What a request for one name resolves to in a generation. */
interface Resolved {
  /** The stored file to read: its name in the generation's folder, and the store's ETag of it. */
  stored: string;
  storeEtag?: string;
  contentType: string;
  etag: string;
  /** Send as `Content-Encoding: gzip`; or gunzip on the way out (`decode`). */
  encoding?: 'gzip';
  decode?: boolean;
  /** Size of what is sent, when known before streaming. */
  size: number;
}

/** Bytes of a stored file: the local copy's size, or what the loader recorded of the store's object. */
async function storedSize(generation: GenerationDoc, stored: string, recorded: number | undefined): Promise<number> {
  if (generation.exportBase !== undefined && recorded !== undefined) return recorded;
  try {
    return (await stat(path.join(generation.exportDir ?? '', stored))).size;
  } catch {
    // The generation was dropped between the lookup and the read.
    throw ApiError.notFound('Export object not found.');
  }
}

async function resolve(ctx: AppContext, generation: GenerationDoc, name: string): Promise<Resolved> {
  if (name === 'manifest.json') {
    const stored = generation.exportManifest;
    const size = await storedSize(generation, name, stored?.storedBytes);
    return { stored: name, storeEtag: stored?.etag, contentType: 'application/json; charset=utf-8', etag: `"${generation.manifestSha256}"`, size };
  }
  const gzTwin = name.endsWith('.jsonl.gz');
  const plain = gzTwin ? name.slice(0, -'.gz'.length) : name;
  const candidates = EXPORTS.get(plain);
  if (!candidates) throw ApiError.notFound();
  const entry: GenerationFile | undefined = generation.files.find((f) => candidates.includes(f.path));
  if (!entry) throw ApiError.notFound('Export object not found.');
  const storedGz = entry.storedAs.endsWith('.gz');
  const stored = { stored: entry.storedAs, storeEtag: entry.etag };
  if (gzTwin) {
    if (!storedGz) throw ApiError.notFound('Export object not found.');
    return { ...stored, contentType: 'application/gzip', etag: `"${entry.sha256}.gz"`, size: await storedSize(generation, entry.storedAs, entry.storedBytes) };
  }
  const contentType = entry.contentType || (plain.endsWith('.jsonl') ? NDJSON : 'application/json; charset=utf-8');
  if (!storedGz) return { ...stored, contentType, etag: `"${entry.sha256}"`, size: await storedSize(generation, entry.storedAs, entry.storedBytes) };
  ctx.vary('Accept-Encoding');
  if (ctx.get('Accept-Encoding') && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    return { ...stored, contentType, etag: `"${entry.sha256}.gz"`, encoding: 'gzip', size: await storedSize(generation, entry.storedAs, entry.storedBytes) };
  }
  return { ...stored, contentType, etag: `"${entry.sha256}"`, decode: true, size: entry.sizeBytes };
}

/** A store that refused or stayed away, as this route's answers (anything else is a 500, logged). */
function fromStore(error: unknown): unknown {
  if (!(error instanceof StoreError)) return error;
  // Gone, or replaced since the load: never serve other bytes under the recorded ETag.
  if (error.status === 404 || error.status === 412) return ApiError.notFound('Export object not found.');
  if (error.transient) return ApiError.unavailable('The export store cannot be reached right now.');
  return error;
}

/** The stored bytes (or a range of them): from the local copy, or through the store (retried and resumed inside). */
async function openStored(store: ObjectStore, generation: GenerationDoc, found: Resolved, range: { start: number; end: number } | undefined, signal: AbortSignal): Promise<Readable> {
  if (generation.exportBase === undefined) {
    return createReadStream(path.join(generation.exportDir ?? '', found.stored), range ? { start: range.start, end: range.end } : {});
  }
  const url = resolveStoreUrl(generation.exportBase, encodeURIComponent(found.stored));
  try {
    const body = await store.open(url, { ...range, validator: found.storeEtag ? { etag: found.storeEtag } : undefined, signal });
    return Readable.from(body, { objectMode: false });
  } catch (error) {
    throw fromStore(error);
  }
}

/** The live generation; the last one seen when ES fails (never when ES says none is loaded). */
async function servedGeneration(search: SearchService, ticket: Ticket): Promise<GenerationDoc> {
  try {
    return (await search.reader(ticket)).generation;
  } catch (error) {
    const last = search.lastLive();
    if (last === undefined) throw error;
    return last;
  }
}

export function exportRoutes(router: AppRouter, deps: RouteDeps): void {
  const store = createObjectStore(deps.config.store, { onRetry: (event) => deps.logger.warn(event, 'export store: retrying') });
  const operation = { summary: "A file of the live generation's bundle", query: [], headers: EXPORT_HEADERS, answer: { kind: 'file' } } as const;
  route(router, '/v1/exports/:file', operation, async (ctx) => sendFile(ctx, store, await servedGeneration(deps.search, ctx.state.ticket)));
  const kept = { ...operation, summary: 'A file of a kept bundle (`queryable` in `/v1/bundles`)', mayBeGone: true } as const;
  route(router, '/v1/bundles/:bundleId/exports/:file', kept, async (ctx) => {
    const generation = await pinnedGeneration(deps.search, ctx.params.bundleId!, 'bundleId');
    await sendFile(ctx, store, (await deps.search.reader(ctx.state.ticket, generation)).generation);
  });
}

/** A file of `generation`'s bundle, whole or a byte range, with its validators. */
async function sendFile(ctx: AppContext, store: ObjectStore, generation: GenerationDoc): Promise<void> {
  // For the request log and the bundle headers (this route sets its own caching, so the cache middleware ignores it).
  noteRead(ctx, generation);
  const found = await resolve(ctx, generation, ctx.params.file!);
  ctx.compress = false;
  ctx.set('Cache-Control', CACHE_CONTROL);
  ctx.set('ETag', found.etag);
  ctx.set('Last-Modified', new Date(generation.generatedAt ?? generation.loadedAt).toUTCString());
  if (found.encoding) ctx.set('Content-Encoding', found.encoding);
  if (notModified(ctx)) {
    ctx.status = 304;
    return;
  }

  // Byte ranges of a file sent as stored. A `.jsonl` sent gzip-encoded or decoded is always sent
  // whole: a slice of a gzip stream labelled `Content-Encoding: gzip` is one no client can decode
  // (found by the fuzzer); the `.jsonl.gz` twin serves ranges of the compressed bytes.
  const ranged = !found.decode && !found.encoding;
  let range = ranged ? parseRange(ctx.get('Range') || undefined, found.size) : undefined;
  const ifRange = ctx.get('If-Range');
  if (ifRange && ifRange !== found.etag) range = undefined;
  if (ranged) ctx.set('Accept-Ranges', 'bytes');
  if (range === 'unsatisfiable') {
    throw new ApiError('bad_request', 'The requested range is outside the file.', 416, { parameter: 'Range', size: found.size }, { 'Content-Range': `bytes */${found.size}` });
  }
  // The bytes are opened before any header of a 206 is set: a store's refusal is answered whole.
  let stream: Readable | undefined;
  if (ctx.method !== 'HEAD') {
    // A client that goes away stops the store read at once (no connection kept for nobody).
    const gone = new AbortController();
    ctx.res.once('close', () => gone.abort());
    stream = await openStored(store, generation, found, range, gone.signal);
  }
  if (range) {
    ctx.status = 206;
    ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${found.size}`);
  }
  const length = range ? range.end - range.start + 1 : found.size;
  if (!stream) {
    // Koa sends no body for HEAD; opening the file would only leak a descriptor.
    ctx.body = '';
  } else if (found.decode) {
    // pipeline, not pipe: Koa destroys the body it was given (the gunzip) when the client
    // leaves, and only pipeline passes that back to the file, whose descriptor `pipe` left open
    // for good (a source paused by backpressure never reaches its end). Errors reach the body.
    ctx.body = pipeline(stream, createGunzip(), () => {});
  } else {
    ctx.body = stream;
  }
  ctx.type = found.contentType;
  ctx.length = length;
}
