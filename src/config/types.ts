/**
 * The shape of the configuration: `Config`, flat, as every consumer reads it, and the types of
 * its values. What each key means is said where its setting is declared (the section files);
 * this module imports nothing, so the sections and the entry can all depend on it.
 */

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export type QueueOrder = 'adaptive' | 'fifo';

/** A cycle and the instant it starts; rows that happened before the first start are uncycled. */
export interface CycleStart {
  cycle: number;
  startsAt: string;
  startsAtMs: number;
}

/**
 * A per-client budget: `rate` points per second on average, at most `burst` at once. The
 * limiter counts `burst` points per window of `burst / rate` seconds (see
 * src/http/middleware/rate-limit.ts), so the window must be whole seconds, as the
 * `RateLimit-Policy` field's `w` is.
 */
export interface RateLimit {
  rate: number;
  burst: number;
  windowSeconds: number;
}

/**
 * Access to an S3-compatible object store, under the AWS SDKs' own variable names. Requests to
 * `s3://` are signed (SigV4) with the key; without `endpoint` they go to AWS itself.
 */
export interface StoreConfig {
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
  // Undefined: guessed from the host (src/store/transport.ts).
  region: string | undefined;
  endpoint: string | undefined;
  timeoutMs: number;
  attempts: number;
}

export interface Config {
  // One URL, or the node list normalised by parseEsUrl (the client reads it back through it).
  esUrl: string | undefined;
  esHeap: string;
  esRequestTimeoutMs: number;
  indexPrefix: string;
  bundleDir: string | undefined;
  dataDir: string;
  cacheDir: string;
  host: string;
  port: number;
  workers: number;
  // Set by the primary in each worker's environment, never by users; undefined in a single process.
  workerIndex: number | undefined;
  shutdownTimeoutMs: number;
  registryName: string;
  defaultEnvironment: string;
  currentCycle: number | undefined;
  cycleStarts: readonly CycleStart[];
  metricsPrefix: string;
  cursorSecret: string;
  logLevel: LogLevel;
  // Undefined: `off` (likewise below for a limit that can be turned off).
  rateLimit: RateLimit | undefined;
  // Undefined: budgets kept in this gateway (one across its workers).
  rateLimitStore: string | undefined;
  trustedProxies: readonly string[];
  apiKeys: readonly string[];
  maxConnectionsPerClient: number | undefined;
  exportConcurrency: number | undefined;
  esMaxInFlight: number | undefined;
  esQueue: number;
  esQueueMs: number;
  esQueueOrder: QueueOrder;
  // Bytes, though the setting counts MB.
  responseCacheBytes: number | undefined;
  downloadMaxRows: number;
  streamsPerClient: number;
  streamsMax: number;
  // Bytes, though the setting counts KB.
  streamBufferBytes: number;
  keepGenerations: number;
  // Undefined: generations are kept by count alone.
  keepHours: number | undefined;
  tombstoneDays: number;
  esReplicas: number;
  // Bytes, though the setting counts GB.
  shardTargetBytes: number;
  minShards: number;
  // Undefined: sized from the cluster's write threads (loader/write-capacity.ts).
  loadConcurrency: number | undefined;
  // Undefined: sized from the cores (loader/parse-pool.ts).
  loadWorkers: number | undefined;
  loadNice: number;
  loadSource: string | undefined;
  followEveryMs: number;
  store: StoreConfig;
}
