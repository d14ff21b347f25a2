/**
 * `/v1/exports/{file}`: the live generation's bundle files, streamed from the immutable copy
 * the loader kept for that generation (a reload never serves a mix of two bundles).
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
 *   read keep being served: they are on local disk and never change. (Only the live lookup
 *   needs ES; the JSON routes answer 503 meanwhile.)
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { createGunzip } from 'node:zlib';
import { INDICES, OPS_DOCUMENTS } from '../indices/all.ts';
import type { GenerationDoc, GenerationFile } from '../indices/generation.ts';
import { notModified } from '../http/conditional.ts';
import { ApiError } from '../errors.ts';
import { parseRange } from '../http/range.ts';
import { EXPORT_HEADERS } from '../query/params.ts';
import type { SearchService } from '../search/search-service.ts';
import type { AppContext, AppRouter, RouteDeps } from './context.ts';
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
  /** The stored file to read. */
  file: string;
  contentType: string;
  etag: string;
  /** Send as `Content-Encoding: gzip`; or gunzip on the way out (`decode`). */
  encoding?: 'gzip';
  decode?: boolean;
  /** Size of what is sent, when known before streaming. */
  size: number;
}

async function resolve(ctx: AppContext, generation: GenerationDoc, name: string): Promise<Resolved> {
  const dir = generation.exportDir;
  if (name === 'manifest.json') {
    const file = path.join(dir, 'manifest.json');
    return { file, contentType: 'application/json; charset=utf-8', etag: `"${generation.manifestSha256}"`, size: await sizeOf(file) };
  }
  const gzTwin = name.endsWith('.jsonl.gz');
  const plain = gzTwin ? name.slice(0, -'.gz'.length) : name;
  const candidates = EXPORTS.get(plain);
  if (!candidates) throw ApiError.notFound();
  const entry: GenerationFile | undefined = generation.files.find((f) => candidates.includes(f.path));
  if (!entry) throw ApiError.notFound('Export object not found.');
  const storedGz = entry.storedAs.endsWith('.gz');
  const file = path.join(dir, entry.storedAs);
  if (gzTwin) {
    if (!storedGz) throw ApiError.notFound('Export object not found.');
    return { file, contentType: 'application/gzip', etag: `"${entry.sha256}.gz"`, size: await sizeOf(file) };
  }
  const contentType = entry.contentType || (plain.endsWith('.jsonl') ? NDJSON : 'application/json; charset=utf-8');
  if (!storedGz) return { file, contentType, etag: `"${entry.sha256}"`, size: await sizeOf(file) };
  ctx.vary('Accept-Encoding');
  if (ctx.get('Accept-Encoding') && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    return { file, contentType, etag: `"${entry.sha256}.gz"`, encoding: 'gzip', size: await sizeOf(file) };
  }
  return { file, contentType, etag: `"${entry.sha256}"`, decode: true, size: entry.sizeBytes };
}

async function sizeOf(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch {
    // The generation was dropped between the lookup and the read.
    throw ApiError.notFound('Export object not found.');
  }
}

/** The live generation; the last one seen when ES fails (never when ES says none is loaded). */
async function servedGeneration(search: SearchService): Promise<GenerationDoc> {
  try {
    return (await search.reader()).generation;
  } catch (error) {
    const last = search.lastLive();
    if (last === undefined) throw error;
    return last;
  }
}

export function exportRoutes(router: AppRouter, deps: RouteDeps): void {
  const operation = { summary: "A file of the live generation's bundle", query: [], headers: EXPORT_HEADERS, answer: { kind: 'file' } } as const;
  route(router, '/v1/exports/:file', operation, async (ctx) => {
    const generation = await servedGeneration(deps.search);
    // For the request log (this route sets its own caching, so the cache middleware ignores it).
    ctx.state.generation = generation.generation;
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
    if (range) {
      ctx.status = 206;
      ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${found.size}`);
    }
    const length = range ? range.end - range.start + 1 : found.size;
    if (ctx.method === 'HEAD') {
      // Koa sends no body for HEAD; opening the file would only leak a descriptor.
      ctx.body = '';
    } else {
      const stream = createReadStream(found.file, range ? { start: range.start, end: range.end } : {});
      if (found.decode) {
        const gunzip = createGunzip();
        stream.once('error', (error) => gunzip.destroy(error));
        ctx.body = stream.pipe(gunzip);
      } else {
        ctx.body = stream;
      }
    }
    ctx.type = found.contentType;
    ctx.length = length;
  });
}
