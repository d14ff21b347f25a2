/**
 * Configuration, read once from the environment, validated and frozen.
 *
 * Every other module receives a `Config` (or the part it needs) as an argument;
 * nothing else reads `process.env`. An invalid value fails start-up with a message
 * naming the variable, never later on a request.
 */
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseIsoInstant } from './time/instant.ts';

/** The project root, so paths work whatever the working directory is. */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** A cycle and the instant it starts; rows that happened before the first start are uncycled. */
export interface CycleStart {
  cycle: number;
  startsAt: string;
  startsAtMs: number;
}

export interface Config {
  /**
   * Elasticsearch to use: one URL, or a comma-separated list of one cluster's nodes (validated
   * and normalised by `parseEsUrl`); when absent the project provisions one (scripts/elasticsearch.ts).
   */
  esUrl: string | undefined;
  /** Heap for a provisioned Elasticsearch, e.g. `1g`. */
  esHeap: string;
  /** Per-request Elasticsearch timeout; past it a request answers 504 `timeout`. */
  esRequestTimeoutMs: number;
  /** Prefix of every alias and index this project owns, so several instances share a cluster. */
  indexPrefix: string;
  /** Bundle served by `npm start` (default: the generated sample). */
  bundleDir: string | undefined;
  /** Where generations keep their immutable copy of the bundle files (served by /v1/exports). */
  dataDir: string;
  /** Cache for the Elasticsearch distribution, its data and logs. */
  cacheDir: string;
  host: string;
  port: number;
  /**
   * Gateway processes serving the port (`WORKERS=<n>|auto`, auto = `availableParallelism()`):
   * with more than one, a primary process forks them (node:cluster, src/workers/primary.ts) and
   * serves no request itself.
   */
  workers: number;
  /**
   * Which worker this process is (0 … workers - 1), set by the primary in each worker's
   * environment (`WORKER_INDEX`), never by users: it picks the worker's share of machine-wide
   * totals (ES_MAX_IN_FLIGHT, ES_QUEUE). Undefined in a single process.
   */
  workerIndex: number | undefined;
  /**
   * On SIGTERM/SIGINT, how long requests in flight may take to finish; connections still
   * open then (a slow download, a client that never finishes its request) are closed.
   */
  shutdownTimeoutMs: number;
  /** `meta.registry` of every response. */
  registryName: string;
  defaultEnvironment: string;
  /** Overrides the current cycle of every generation (else manifest `cycles`, else data). */
  currentCycle: number | undefined;
  /** Cycle boundaries used to derive the cycle of killmails, events and chain objects. */
  cycleStarts: readonly CycleStart[];
  /** Prefix of the gauges on /metrics (`blackrelay_api` makes the reference explorer work). */
  metricsPrefix: string;
  /** HMAC key of cursors: an edited or foreign cursor is a 400. Set your own; the default is public. */
  cursorSecret: string;
  logLevel: LogLevel;
  /** Per-client budget (`RATE_LIMIT`, see `parseRateLimit`); undefined = `off`. */
  rateLimit: RateLimit | undefined;
  /**
   * Where the budgets are kept so that several gateways share them (`RATE_LIMIT_STORE`, a
   * `redis://` or `rediss://` URL of Redis or Valkey); undefined = in this gateway (one budget
   * across its workers).
   */
  rateLimitStore: string | undefined;
  /** Peers whose `X-Forwarded-For` / `Forwarded` name the client (addresses or CIDR blocks); none by default. */
  trustedProxies: readonly string[];
  /** Keys that, sent in `X-Api-Key`, are the client's identity instead of its address (none by default). */
  apiKeys: readonly string[];
  /**
   * Connections one client address may hold open at once (`MAX_CONNECTIONS_PER_CLIENT`); one
   * more is reset when accepted, before any HTTP parsing (src/http/connection-cap.ts). Per
   * gateway process: each worker of a cluster counts its own. `TRUSTED_PROXIES` are exempt;
   * undefined = `off`.
   */
  maxConnectionsPerClient: number | undefined;
  /** Downloads (`/v1/exports`) one client may have in flight at once; undefined = no limit. */
  exportConcurrency: number | undefined;
  /**
   * Admission control: Elasticsearch requests in flight on this machine (undefined = no cap; each
   * worker admits its share), the queue behind them (shared out the same way) and its longest wait.
   */
  esMaxInFlight: number | undefined;
  esQueue: number;
  esQueueMs: number;
  /** `adaptive`: newest first while the queue stands (src/search/admission.ts); `fifo`: always in arrival order. */
  esQueueOrder: QueueOrder;
  /** Bytes the response cache may hold (`RESPONSE_CACHE`, in MB); undefined = `off`. */
  responseCacheBytes: number | undefined;
  /** Rows a list asked as a file (`format=csv|ndjson`) holds at most (`DOWNLOAD_MAX_ROWS`). */
  downloadMaxRows: number;
  /** Event streams (`/v1/killmails/stream`, `/v1/events/stream`) one client may hold open in the whole gateway — with workers, the primary counts them (`STREAMS_PER_CLIENT`). */
  streamsPerClient: number;
  /** Event streams open on this machine (`STREAMS_MAX`; each worker admits its share). */
  streamsMax: number;
  /** Unsent bytes past which a stream whose client does not read is cut (`STREAM_BUFFER_KB`). */
  streamBufferBytes: number;
  /** Generations a load keeps, the live one included (rollback reaches the others). */
  keepGenerations: number;
  /** Days the rows that left or changed are kept for `include=removed` walks and 410s, whatever KEEP_GENERATIONS says (`TOMBSTONE_DAYS`). */
  tombstoneDays: number;
  /** Replicas of every index once loaded (0 on a single node). */
  esReplicas: number;
  /** Bytes of uncompressed JSONL per primary shard: an index gets one shard per this many bytes of its file. */
  shardTargetBytes: number;
  /**
   * `LOAD_CONCURRENCY`: bulk requests a load keeps in flight across all its files; undefined =
   * sized from the cluster's write threads (one per thread of the data nodes, and one more).
   */
  loadConcurrency: number | undefined;
  /**
   * `LOAD_WORKERS`: worker threads that parse the lines of a load's large files into bulk bytes
   * (loader/parse-pool.ts); 0 = none, all on the loader's thread; undefined = two (one per
   * core but one, at most two), none below 4 cores.
   */
  loadWorkers: number | undefined;
  /**
   * `LOAD_NICE`: the loader's CPU priority, as `nice` (0 = as any process; default 10): where it
   * shares cores with Elasticsearch and gateways, their reads go first (loader/cli.ts).
   */
  loadNice: number;
  /** Where the follower (`npm run load -- --follow`) reads bundles: a directory, http(s) URL or s3://bucket/prefix. */
  loadSource: string | undefined;
  /** How often the follower checks the source's pointer. */
  followEveryMs: number;
  /** How `s3://` and `http(s)://` bundle sources are read, by the loader and by /v1/exports. */
  store: StoreConfig;
}

/**
 * Access to an S3-compatible object store, under the AWS SDKs' own variable names. Requests to
 * `s3://` are signed (SigV4) with the key; without `endpoint` they go to AWS itself.
 */
export interface StoreConfig {
  /** `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`); undefined = no key (http(s) sources only). */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
  /** `AWS_REGION`, else `AWS_DEFAULT_REGION`; undefined = guessed from the host (`auto` on R2), else us-east-1. */
  region: string | undefined;
  /** `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL` (R2, MinIO): path-style URLs under it. */
  endpoint: string | undefined;
  /** `STORE_TIMEOUT_MS`: a request with no answer, or a body with no new byte, for this long is a fault (and retried). */
  timeoutMs: number;
  /** `STORE_ATTEMPTS`: tries per request before a transient fault is final (a resumed read that made progress starts again). */
  attempts: number;
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

export type QueueOrder = 'adaptive' | 'fifo';
const QUEUE_ORDERS: readonly QueueOrder[] = ['adaptive', 'fifo'];

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const DEFAULT_CYCLE_STARTS = '5=2026-03-11T09:00:00Z,6=2026-06-25T09:00:00Z';
/** Documented in the README: it keeps cursors unforgeable only once replaced by a secret of your own. */
export const DEFAULT_CURSOR_SECRET = 'registry-gateway-cursor-key';

/** 50 points per second per client, bursts of 100 (a detail read costs 1 point: src/http/request-cost.ts). */
export const DEFAULT_RATE_LIMIT = '50/100';
/**
 * Admission control defaults: about the fewest concurrent searches and facets that keep a small
 * Elasticsearch node busy (more add latency, little throughput: the knee of the overload
 * benchmark's capacity sweep), and a queue as long, so a burst waits briefly instead of being
 * refused.
 */
export const DEFAULT_ES_MAX_IN_FLIGHT = 8;
export const DEFAULT_ES_QUEUE = 8;
/**
 * Connections per client address: above a browser's 6 per host and the 10–50 an HTTP client
 * pools, so only a client opening connections faster than it closes them (a script opening one
 * per request, many at once) meets it. Several people behind one NAT share it.
 */
export const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 32;
/** Response cache size, MB (see README, Operations: sizing the cache). */
export const DEFAULT_RESPONSE_CACHE_MB = 64;
export const DEFAULT_DOWNLOAD_MAX_ROWS = 100_000;
/** Days the rows that left or changed are kept (`TOMBSTONE_DAYS`; src/indices/changes.ts). */
export const DEFAULT_TOMBSTONE_DAYS = 90;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, fallback: string): string {
  const value = env[name]?.trim();
  return value ? value : fallback;
}

/** A setting that names one of `choices`. */
function oneOf<T extends string>(env: Env, name: string, choices: readonly T[], fallback: T): T {
  const value = str(env, name, fallback);
  if (!(choices as readonly string[]).includes(value)) throw new ConfigError(`${name} must be one of ${choices.join(', ')}, got "${value}"`);
  return value as T;
}

function optional(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function int(env: Env, name: string, fallback: number | undefined, min: number, max: number): number | undefined {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

/** Parses `5=2026-03-11T09:00:00Z,6=...` into boundaries sorted by start. */
export function parseCycleStarts(raw: string): CycleStart[] {
  const starts = raw.split(',').map((part) => {
    const match = /^\s*(\d+)\s*=\s*(\S+)\s*$/.exec(part);
    // The one strict instant parser: a 30th of February is refused, never moved to March.
    const parsed = match ? parseIsoInstant(match[2]!) : undefined;
    const startsAtMs = parsed ? parsed.ms + Number(parsed.fraction.slice(0, 3).padEnd(3, '0')) : NaN;
    if (!match || Number(match[1]) < 1 || Number.isNaN(startsAtMs)) {
      throw new ConfigError(`CYCLE_STARTS must look like "5=2026-03-11T09:00:00Z,6=...", got "${raw}"`);
    }
    return { cycle: Number(match[1]), startsAt: match[2]!, startsAtMs };
  });
  return starts.sort((a, b) => a.startsAtMs - b.startsAtMs);
}

/**
 * Splits `ES_URL` into node URLs: one URL, or a comma-separated list of the nodes of one cluster
 * (`http://10.0.0.1:9200,http://10.0.0.2:9200`). Each must be an absolute http(s) URL and appear
 * once; trailing slashes are dropped. The client (src/search/client.ts) reads the list back
 * through this function, so there is one spelling of the format.
 */
export function parseEsUrl(raw: string): string[] {
  const urls = raw.split(',').map((part) => part.trim().replace(/\/+$/, ''));
  for (const url of urls) {
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      // Never echo credentials a URL may carry.
      const shown = url.replace(/\/\/[^/@]*@/, '//…@');
      throw new ConfigError(`ES_URL must be an http(s) URL or a comma-separated list of them, got "${shown}"`);
    }
  }
  const repeated = urls.find((url, i) => urls.indexOf(url) !== i);
  if (repeated) throw new ConfigError(`ES_URL lists ${new URL(repeated).host} twice`);
  return urls;
}

/** `50/100` → 50 points per second, bursts of 100 (a window of 2 s); `off` → undefined. */
export function parseRateLimit(raw: string): RateLimit | undefined {
  if (raw.toLowerCase() === 'off') return undefined;
  const match = /^(\d{1,6})\s*\/\s*(\d{1,7})$/.exec(raw);
  const rate = Number(match?.[1]);
  const burst = Number(match?.[2]);
  if (!match || rate < 1 || burst < rate || burst % rate !== 0) {
    throw new ConfigError(`RATE_LIMIT must be "off" or <rate>/<burst> with burst a whole multiple of rate (e.g. 50/100), got "${raw}"`);
  }
  return { rate, burst, windowSeconds: burst / rate };
}

/** `TRUSTED_PROXIES`: addresses and CIDR blocks (IPv4 or IPv6), comma-separated. */
export function parseTrustedProxies(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  return raw.split(',').map((part) => {
    const entry = part.trim();
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const max = family === 6 ? 128 : 32;
    if (!family || extra !== undefined || (bits !== undefined && (!/^\d{1,3}$/.test(bits) || Number(bits) > max))) {
      throw new ConfigError(`TRUSTED_PROXIES must list IP addresses or CIDR blocks (10.0.0.0/8, ::1), got "${entry}"`);
    }
    return entry;
  });
}

/** `API_KEYS`: comma-separated keys of at least 16 characters (a short key is guessable, and guessing one buys a budget). */
function apiKeys(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  const keys = raw.split(',').map((key) => key.trim());
  if (keys.some((key) => !/^[\x21-\x7e]{16,200}$/.test(key))) throw new ConfigError('API_KEYS must be comma-separated keys of 16 to 200 printable characters');
  return keys;
}

/** The default metrics prefix of a registry name: `blackrelay-api` → `blackrelay_api`. */
export function metricsPrefixOf(registryName: string): string {
  const prefix = registryName.toLowerCase().replace(/[^a-z_]+/g, '_').replace(/^_+|_+$/g, '');
  return prefix === '' ? 'registry_api' : prefix;
}

/** `WORKERS`: a count, or `auto` for the cores Node may use. */
export function parseWorkers(raw: string): number {
  if (raw === 'auto') return availableParallelism();
  if (!/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > 256) throw new ConfigError(`WORKERS must be "auto" or an integer from 1 to 256, got "${raw}"`);
  return Number(raw);
}

/** `RATE_LIMIT_STORE`: a redis:// or rediss:// URL (Redis or Valkey). */
export function parseStoreUrl(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!URL.canParse(raw) || !/^rediss?:$/.test(new URL(raw).protocol)) {
    throw new ConfigError(`RATE_LIMIT_STORE must be a redis:// or rediss:// URL, got "${raw.replace(/\/\/[^/@]*@/, '//…@')}"`);
  }
  return raw;
}

/** `90s`, `5m`, `1h`, `500ms` → milliseconds (a bare number is seconds). */
export function parseDuration(name: string, raw: string, minMs: number): number {
  const match = /^(\d{1,9})\s*(ms|s|m|h)?$/.exec(raw.trim());
  const ms = match ? Number(match[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'] : NaN;
  if (!(ms >= minMs)) throw new ConfigError(`${name} must be a duration of at least ${minMs} ms such as 60s, 5m or 1h, got "${raw}"`);
  return ms;
}

/** MB (whole), or `off` → undefined; bytes otherwise. */
function mebibytesOrOff(env: Env, name: string, fallback: number): number | undefined {
  if (optional(env, name)?.toLowerCase() === 'off') return undefined;
  return int(env, name, fallback, 1, 1_000_000)! * 1024 * 1024;
}

/** A count, or `off` (no limit) → undefined. */
function countOrOff(env: Env, name: string, fallback: number, max: number): number | undefined {
  if (optional(env, name)?.toLowerCase() === 'off') return undefined;
  return int(env, name, fallback, 1, max);
}

/** The object store settings (`StoreConfig`): a key is whole or absent, an endpoint is an http(s) origin. */
export function parseStoreConfig(env: Env): StoreConfig {
  const accessKeyId = optional(env, 'AWS_ACCESS_KEY_ID');
  const secretAccessKey = optional(env, 'AWS_SECRET_ACCESS_KEY');
  const sessionToken = optional(env, 'AWS_SESSION_TOKEN');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together');
  }
  if (sessionToken !== undefined && accessKeyId === undefined) throw new ConfigError('AWS_SESSION_TOKEN needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  const regionName = optional(env, 'AWS_REGION') === undefined ? 'AWS_DEFAULT_REGION' : 'AWS_REGION';
  const region = optional(env, regionName);
  if (region !== undefined && !/^[a-z0-9-]{1,40}$/.test(region)) throw new ConfigError(`${regionName} must be a region name such as eu-west-1 or auto, got "${region}"`);
  const endpointName = optional(env, 'AWS_ENDPOINT_URL_S3') === undefined ? 'AWS_ENDPOINT_URL' : 'AWS_ENDPOINT_URL_S3';
  const endpointRaw = optional(env, endpointName);
  let endpoint: string | undefined;
  if (endpointRaw !== undefined) {
    const url = URL.canParse(endpointRaw) ? new URL(endpointRaw) : undefined;
    if (!url || !/^https?:$/.test(url.protocol) || url.username || url.password || url.search || url.hash) {
      throw new ConfigError(`${endpointName} must be an http(s) URL such as https://<account>.r2.cloudflarestorage.com, got "${endpointRaw.replace(/\/\/[^/@]*@/, '//…@')}"`);
    }
    endpoint = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  }
  return Object.freeze({
    credentials: accessKeyId === undefined ? undefined : Object.freeze({ accessKeyId, secretAccessKey: secretAccessKey!, ...(sessionToken ? { sessionToken } : {}) }),
    region,
    endpoint,
    timeoutMs: int(env, 'STORE_TIMEOUT_MS', 30_000, 100, 600_000)!,
    attempts: int(env, 'STORE_ATTEMPTS', 6, 1, 100)!,
  });
}

/**
 * `loadConfig` for a process's entry point: a refused setting is one line naming it and exit 2
 * (as the loader's CLI answers), not a stack trace.
 */
export function loadConfigOrExit(env: Env = process.env): Readonly<Config> {
  try {
    return loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`Configuration refused: ${error.message}`);
    process.exit(2);
  }
}

/** Reads and validates the environment. Call once, at start-up. */
export function loadConfig(env: Env = process.env): Readonly<Config> {
  const logLevel = oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info');
  const esQueueOrder = oneOf(env, 'ES_QUEUE_ORDER', QUEUE_ORDERS, 'adaptive');
  const indexPrefix = str(env, 'INDEX_PREFIX', 'registry');
  if (!/^[a-z0-9][a-z0-9_-]{0,40}$/.test(indexPrefix)) {
    throw new ConfigError(`INDEX_PREFIX must be lowercase letters, digits, "-" or "_", got "${indexPrefix}"`);
  }
  const registryName = str(env, 'REGISTRY_NAME', 'blackrelay-api');
  // The registry's own explorer reads `<registry name>_<key>` lines (blackrelay_api_entities …).
  const metricsPrefix = str(env, 'METRICS_PREFIX', metricsPrefixOf(registryName));
  if (!/^[a-z_][a-z_]*$/.test(metricsPrefix)) {
    throw new ConfigError(`METRICS_PREFIX must be lowercase letters and "_", got "${metricsPrefix}"`);
  }
  const cacheDir = path.resolve(PROJECT_ROOT, str(env, 'CACHE_DIR', '.cache'));
  const bundleDir = optional(env, 'BUNDLE_DIR');
  const esUrl = optional(env, 'ES_URL');
  return Object.freeze({
    esUrl: esUrl === undefined ? undefined : parseEsUrl(esUrl).join(','),
    esHeap: str(env, 'ES_HEAP', '1g'),
    esRequestTimeoutMs: int(env, 'ES_REQUEST_TIMEOUT_MS', 10_000, 100, 600_000)!,
    indexPrefix,
    // npm runs scripts in the project root; a relative BUNDLE_DIR means the caller's directory.
    bundleDir: bundleDir ? path.resolve(env.INIT_CWD ?? process.cwd(), bundleDir) : undefined,
    dataDir: path.resolve(PROJECT_ROOT, str(env, 'DATA_DIR', path.join(cacheDir, 'data'))),
    cacheDir,
    host: str(env, 'HOST', '127.0.0.1'),
    port: int(env, 'PORT', 8080, 0, 65535)!,
    workers: parseWorkers(str(env, 'WORKERS', '1')),
    workerIndex: int(env, 'WORKER_INDEX', undefined, 0, 255),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000)!,
    registryName,
    defaultEnvironment: str(env, 'DEFAULT_ENVIRONMENT', 'stillness'),
    currentCycle: int(env, 'CURRENT_CYCLE', undefined, 1, 1_000_000),
    cycleStarts: Object.freeze(parseCycleStarts(str(env, 'CYCLE_STARTS', DEFAULT_CYCLE_STARTS))),
    metricsPrefix,
    cursorSecret: str(env, 'CURSOR_SECRET', DEFAULT_CURSOR_SECRET),
    logLevel,
    rateLimit: parseRateLimit(str(env, 'RATE_LIMIT', DEFAULT_RATE_LIMIT)),
    rateLimitStore: parseStoreUrl(optional(env, 'RATE_LIMIT_STORE')),
    trustedProxies: Object.freeze(parseTrustedProxies(optional(env, 'TRUSTED_PROXIES'))),
    apiKeys: Object.freeze(apiKeys(optional(env, 'API_KEYS'))),
    maxConnectionsPerClient: countOrOff(env, 'MAX_CONNECTIONS_PER_CLIENT', DEFAULT_MAX_CONNECTIONS_PER_CLIENT, 100_000),
    exportConcurrency: countOrOff(env, 'EXPORT_CONCURRENCY', 4, 10_000),
    esMaxInFlight: countOrOff(env, 'ES_MAX_IN_FLIGHT', DEFAULT_ES_MAX_IN_FLIGHT, 10_000),
    esQueue: int(env, 'ES_QUEUE', DEFAULT_ES_QUEUE, 0, 100_000)!,
    esQueueMs: int(env, 'ES_QUEUE_MS', 1000, 1, 600_000)!,
    esQueueOrder,
    responseCacheBytes: mebibytesOrOff(env, 'RESPONSE_CACHE', DEFAULT_RESPONSE_CACHE_MB),
    keepGenerations: int(env, 'KEEP_GENERATIONS', 2, 1, 100)!,
    tombstoneDays: int(env, 'TOMBSTONE_DAYS', DEFAULT_TOMBSTONE_DAYS, 1, 36_500)!,
    downloadMaxRows: int(env, 'DOWNLOAD_MAX_ROWS', DEFAULT_DOWNLOAD_MAX_ROWS, 1, 10_000_000)!,
    streamsPerClient: int(env, 'STREAMS_PER_CLIENT', 4, 1, 100_000)!,
    streamsMax: int(env, 'STREAMS_MAX', 1000, 1, 1_000_000)!,
    streamBufferBytes: int(env, 'STREAM_BUFFER_KB', 1024, 1, 1_048_576)! * 1024,
    esReplicas: int(env, 'ES_REPLICAS', 0, 0, 10)!,
    shardTargetBytes: int(env, 'ES_SHARD_TARGET_GB', 25, 1, 1000)! * 1024 ** 3,
    loadConcurrency: int(env, 'LOAD_CONCURRENCY', undefined, 1, 1000),
    loadWorkers: int(env, 'LOAD_WORKERS', undefined, 0, 256),
    loadNice: int(env, 'LOAD_NICE', 10, 0, 19)!,
    loadSource: optional(env, 'LOAD_SOURCE'),
    followEveryMs: parseDuration('FOLLOW_EVERY', str(env, 'FOLLOW_EVERY', '60s'), 1000),
    store: parseStoreConfig(env),
  });
}
