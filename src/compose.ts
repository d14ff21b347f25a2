/**
 * The composition root: what one gateway process is made of, built here and nowhere else — the
 * Elasticsearch client and the search service behind admission control, metrics, the response
 * cache, a client's holds, the stream hub, the points budget, the refusals answered before Koa,
 * the router and the Koa app. src/server.ts puts it behind Node's HTTP server; tests and
 * benchmarks build the same thing through this function, so none of them runs a hub, a budget or
 * a cache made differently from production's.
 */
import type Koa from 'koa';
import type { DestinationStream, Logger } from 'pino';
import type { Config } from './config.ts';
import { createApp, createRouter } from './app.ts';
import { type BudgetStore, connectBudgetStore } from './limits/budget-store.ts';
import { identityRules } from './limits/client-identity.ts';
import { type EarlyRefusal, createEarlyRefusal } from './http/early-refusal.ts';
import { createMeta } from './http/envelope.ts';
import { localHolds } from './limits/holds.ts';
import { createLogger } from './http/logger.ts';
import { type Metrics, createMetrics } from './http/metrics.ts';
import { createLimits } from './limits/decide.ts';
import { policyField } from './limits/fields.ts';
import { createLimiter, createPoints } from './limits/points.ts';
import { createResponseCache } from './http/response-cache.ts';
import type { AppRouter, AppState, RouteDeps } from './routes/context.ts';
import { countGauges, createCountSource } from './routes/counts.ts';
import { createFreshnessSource } from './routes/freshness.ts';
import { routeCost } from './routes/operation.ts';
import { createAdmission } from './limits/admission.ts';
import { createClient } from './search/client.ts';
import { createOutageLog } from './search/outage-log.ts';
import { createSearchService } from './search/search-service.ts';
import { type StreamHub, createStreamHub } from './stream/hub.ts';
import { clusterHolds } from './workers/holds.ts';
import { clusterScrape } from './workers/metrics.ts';
import { shareOf } from './workers/share.ts';

export interface ComposeOptions {
  /** Where log lines go (default stdout); tests capture them here. */
  logDestination?: DestinationStream;
  /** The routes to serve instead of the API's (bench/stack-hop.ts serves its own behind the same stack). */
  router?: (deps: RouteDeps) => AppRouter;
}

export interface Gateway {
  app: Koa<AppState>;
  deps: RouteDeps;
  router: AppRouter;
  logger: Logger;
  metrics: Metrics;
  streams: StreamHub;
  /** Refused clients answered before Koa; undefined when neither a budget nor admission control is on. */
  earlyRefusal: EarlyRefusal | false | undefined;
  /** From now on /v1/ready answers 503. */
  markStopping(): void;
  /** Writes out the log's buffered lines (the request log is written asynchronously, src/http/logger.ts). */
  flushLog(): Promise<void>;
  /** Lets go of the budget store and, unless requests may still wait on it, the Elasticsearch client. */
  release(options?: { keepClient?: boolean }): Promise<void>;
}

export async function composeGateway(config: Readonly<Config>, esUrl: string, options: ComposeOptions = {}): Promise<Gateway> {
  const { logger, flush } = createLogger(config.logLevel, options.logDestination);
  // One of several workers (src/workers/primary.ts): machine-wide totals are shared out among them.
  const worker = config.workerIndex !== undefined;
  const share = (total: number, min = 1) => (worker ? shareOf(total, config.workers, config.workerIndex!, min) : total);
  const client = createClient(esUrl, config.esRequestTimeoutMs, 'failover');
  // Metrics are created once the search service exists, which admission control sits in front of.
  let observeWait: (seconds: number) => void = () => {};
  const admission =
    config.esMaxInFlight === undefined
      ? undefined
      : createAdmission({ maxInFlight: share(config.esMaxInFlight), queue: share(config.esQueue, 0), queueMs: config.esQueueMs, adaptive: config.esQueueOrder === 'adaptive', onWaited: (ms) => observeWait(ms / 1000) });
  const outages = createOutageLog(logger);
  let observeEs: (index: string, seconds: number, ok: boolean) => void = () => {};
  const search = createSearchService({
    client,
    prefix: config.indexPrefix,
    observe: (index, seconds, ok) => {
      observeEs(index, seconds, ok);
      if (ok) outages.succeeded();
    },
    onError: (error, index) => outages.failed(error, index),
    admission,
  });
  const metrics = createMetrics(config.metricsPrefix, countGauges(config.defaultEnvironment), createCountSource(search, config), createFreshnessSource(search));
  observeEs = metrics.observeEs;
  observeWait = metrics.observeAdmissionWait;
  metrics.observeAdmission(admission);
  const meta = createMeta(config.registryName);
  const responseCache = config.responseCacheBytes === undefined ? undefined : createResponseCache(config.responseCacheBytes);
  metrics.observeCache(responseCache);
  if (worker) metrics.scrapeFrom(clusterScrape(metrics.registry, metrics.shared));
  // A client's downloads and streams are counted for the whole gateway: by the primary when there are workers.
  const holds = worker ? clusterHolds() : localHolds();
  const streams = createStreamHub({
    search,
    cursorSecret: config.cursorSecret,
    logger,
    holds,
    perClient: config.streamsPerClient,
    max: share(config.streamsMax),
    bufferBytes: config.streamBufferBytes,
  });
  metrics.observeStreams(streams);
  let stopping = false;
  const rules = identityRules(config.trustedProxies, config.apiKeys);
  const deps: RouteDeps = { config, search, meta, metrics, logger, rules, stopping: () => stopping, streams };
  const router = (options.router ?? createRouter)(deps);
  // One decision per request, by the refusals before Koa or the rate-limit middleware: each request spends once.
  const policy = policyField(config.rateLimit, config.exportConcurrency);
  const store: BudgetStore | undefined = config.rateLimit && config.rateLimitStore ? await connectBudgetStore(config.rateLimitStore, logger) : undefined;
  const points = config.rateLimit && createPoints(config.rateLimit, policy!, createLimiter(config.rateLimit, { worker, store: store?.redis, namespace: config.indexPrefix }));
  const limits = createLimits({ points: points || undefined, exportConcurrency: config.exportConcurrency, holds, admission, policy });
  const costOf = (path: string) => routeCost(router, path);
  const earlyRefusal = (config.rateLimit || admission) && createEarlyRefusal({ limits, rules, meta, costOf });
  metrics.observeEarlyRefusals(earlyRefusal);
  const app = createApp(deps, { limits, costOf, responseCache }, router);
  return {
    app,
    deps,
    router,
    logger,
    metrics,
    streams,
    earlyRefusal,
    markStopping: () => {
      stopping = true;
    },
    flushLog: flush,
    async release({ keepClient = false } = {}) {
      if (!keepClient) await client.close();
      await store?.close();
    },
  };
}
