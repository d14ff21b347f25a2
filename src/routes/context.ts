/** What every route module receives, and the typed router state. */
import type Router from '@koa/router';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { IdentityRules } from '../limits/client-identity.ts';
import { type Meta, bundleOf, stampedMeta } from '../http/envelope.ts';
import type { GenerationDoc } from '../indices/generation.ts';
import { ApiError } from '../errors.ts';
import type { Metrics } from '../http/metrics.ts';
import type { CachingState } from '../http/middleware/caching.ts';
import type { TicketState } from '../http/middleware/rate-limit.ts';
import type { ResponseCache } from '../http/response-cache.ts';
import type { Reader, SearchService } from '../search/search-service.ts';
import type { StreamHub } from '../stream/hub.ts';

export interface RouteDeps {
  config: Readonly<Config>;
  search: SearchService;
  meta: Meta;
  metrics: Metrics;
  logger: Logger;
  /** True once the gateway is stopping (SIGTERM): /v1/ready then answers 503. */
  stopping: () => boolean;
  /** Who a client is (its address, forwarding proxies, API keys): one answer for budgets, caps and streams. */
  rules: IdentityRules;
  /** The event streams of this process (src/stream/hub.ts). */
  streams: StreamHub;
}

/** The response cache and how to read the live generation's id (set by the app when the cache is on). */
export interface ResponsesState {
  responses?: { cache: ResponseCache; live(): Promise<string | undefined> };
}

/** The bundle a request's reads are pinned to (`bundle=`; src/routes/operation.ts), if any. */
export interface PinState {
  pinned?: string;
}

export type AppState = CachingState & ResponsesState & TicketState & PinState;
export type AppRouter = Router<AppState>;
export type AppContext = Parameters<Parameters<AppRouter['get']>[1]>[0];

/**
 * The request's reader, on the live generation or on `generation` (a cursor's): its
 * Elasticsearch requests carry the request's ticket (admission control), and the generation it
 * reads is noted for the response (its ETag, the response cache).
 */
export async function requestReader(ctx: AppContext, search: SearchService, generation?: string): Promise<Reader> {
  const pinned = ctx.state.pinned === undefined ? undefined : await pinnedGeneration(search, ctx.state.pinned);
  if (pinned !== undefined && generation !== undefined && generation !== pinned) {
    throw ApiError.badParameter('cursor', 'This cursor was read from another bundle than `bundle` names. Start again from the first page.');
  }
  const reader = await search.reader(ctx.state.ticket, generation ?? pinned);
  noteRead(ctx, reader.generation);
  return reader;
}

/**
 * The kept generation of `bundleId` (the newest, if it was loaded more than once). A bundle the
 * bundle record knows but no kept generation holds: 410, naming the oldest bundle kept; one
 * never loaded here: 404.
 */
export async function pinnedGeneration(search: SearchService, bundleId: string, parameter = 'bundle'): Promise<string> {
  const kept = await search.kept();
  const found = kept.find((k) => k.bundleId === bundleId);
  if (found) return found.generation;
  if ((await search.bundleRecords({ bundleId, limit: 1 })).total === 0) throw ApiError.bundleNotFound(bundleId, parameter);
  throw ApiError.bundleGone(bundleId, parameter, kept.at(-1)?.bundleId);
}

/** Notes the generation an answer is read from: its ETag and response-cache key, and the bundle its `meta` and headers name. */
export function noteRead(ctx: AppContext, generation: GenerationDoc): void {
  ctx.state.generation = generation.generation;
  ctx.state.bundle = bundleOf(generation);
}

/** The envelope's `meta` for this request: the service's, and the bundle it was read from (once it read one). */
export function metaOf(ctx: AppContext, deps: Pick<RouteDeps, 'meta'>): Meta {
  return stampedMeta(deps.meta, ctx.state.bundle);
}
