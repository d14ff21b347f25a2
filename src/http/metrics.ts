/**
 * Prometheus metrics on the gateway's own registry (never prom-client's global one):
 * default process metrics, request duration by route pattern (never the raw URL), ES
 * request duration by index, unlabelled gauges `<prefix>_build_info` and
 * `<prefix>_<key>` (row counts), the shape the reference's explorer parses
 * (`^blackrelay_api_([a-z_]+)\s+(\d+)$` with the prefix set to `blackrelay_api`), and the
 * freshness of the live data (the follower's last check and load, the live bundle's age and lag),
 * the response cache, and admission control (slots in use, the queue, refusals, waits).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AdmissionStats } from '../limits/admission.ts';
import type { CacheStats } from './response-cache.ts';

export interface Metrics {
  /** What this process counts: its requests, Elasticsearch calls, cache, admission, the Node process. */
  readonly registry: Registry;
  /**
   * What the whole gateway reads alike, whichever process reads it: build info, the row counts
   * (read from Elasticsearch at scrape time) and the freshness of the live data. With workers,
   * the scraping worker reads these once while `registry` is summed over all of them.
   */
  readonly shared: Registry;
  /** The exposition /metrics answers: both registries, or what `scrapeFrom` set. */
  scrape(): Promise<string>;
  /** Reads the exposition elsewhere (a worker: the workers' sum and its own shared gauges, src/workers/metrics.ts). */
  scrapeFrom(read: () => Promise<string>): void;
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  observeEs(index: string, seconds: number, ok: boolean): void;
  /** Reports the response cache's hits, misses, coalesced requests, evictions and size. */
  observeCache(cache: { stats(): CacheStats } | undefined): void;
  /** Reports the refusals answered before Koa (src/http/early-refusal.ts). */
  observeEarlyRefusals(early: { count(): number } | undefined): void;
  /** Reports the connections reset at accept, over a client's cap (src/http/connection-cap.ts). */
  observeConnectionCap(cap: { refused(): number } | undefined): void;
  /** Reports admission control's slots, queue and refusals (src/limits/admission.ts). */
  observeAdmission(admission: { stats(): AdmissionStats } | undefined): void;
  /** Records how long a request admitted through the queue waited for its slot. */
  observeAdmissionWait(seconds: number): void;
  /** Reports the open event streams and those cut (src/stream/hub.ts). */
  observeStreams(streams: { stats(): { open: number; cut: number } } | undefined): void;
}

/** A row-count gauge: `<prefix>_<key>`, unlabelled. */
export interface CountGauge {
  key: string;
  help: string;
}

/** Supplies the row-count gauges at scrape time: key (`entities`, `current_characters`, ...) → count. */
export type CountSource = () => Promise<Record<string, number>>;

/** How fresh the served data is, read at scrape time (src/routes/freshness.ts); absent values are not reported. */
export interface Freshness {
  /** The follower's source, and the live generation: the labels of the gauges that concern them. */
  source?: string;
  generation?: string;
  /** The follower's last check of the source, and whether it failed. */
  lastCheck?: number;
  lastCheckFailed?: boolean;
  /** The follower's last successful load. */
  lastLoad?: number;
  /** The live bundle: when the registry generated it, published it, and when it went live; the lag between. */
  generated?: number;
  published?: number;
  live?: number;
  lag?: number;
}

/**
 * Freshness gauges (Unix seconds, and the lag in seconds): name, label, help, the value. Each is
 * labelled (the follower's `source`, the live `generation`), so an unknown value is no sample at
 * all rather than a misleading 0, and count parsers that read unlabelled lines never see them.
 */
const FRESHNESS: [string, 'source' | 'generation', string, (f: Freshness) => number | undefined][] = [
  ['follower_last_check_timestamp_seconds', 'source', "When the follower last read the source's pointer.", (f) => f.lastCheck],
  ['follower_last_check_failed', 'source', "1 when the follower's last check failed (the source could not be read, or its bundle was refused).", (f) => (f.lastCheckFailed === undefined ? undefined : Number(f.lastCheckFailed))],
  ['follower_last_load_timestamp_seconds', 'source', 'When the follower last made a bundle live.', (f) => f.lastLoad],
  ['live_bundle_generated_timestamp_seconds', 'generation', 'When the registry generated the live bundle (manifest generatedAt).', (f) => f.generated],
  ['live_bundle_published_timestamp_seconds', 'generation', "When the registry published the live bundle (the pointer's publishedAt, else its generatedAt).", (f) => f.published],
  ['live_generation_timestamp_seconds', 'generation', 'When the live generation was loaded.', (f) => f.live],
  ['live_lag_seconds', 'generation', 'From publication to live: when the live generation was loaded less when its bundle was published.', (f) => f.lag],
];

export function createMetrics(prefix: string, gauges: readonly CountGauge[], counts: CountSource, freshness: () => Promise<Freshness> = async () => ({})): Metrics {
  const registry = new Registry();
  const shared = new Registry();
  collectDefaultMetrics({ register: registry, prefix: `${prefix}_` });
  new Gauge({ name: `${prefix}_build_info`, help: 'Always 1; the gateway is running.', registers: [shared] }).set(1);
  // One scrape reads the counts once, whatever the number of gauges.
  let pending: Promise<Record<string, number>> | undefined;
  for (const { key, help } of gauges) {
    new Gauge({
      name: `${prefix}_${key}`,
      help,
      registers: [shared],
      async collect() {
        pending ??= counts().finally(() => setTimeout(() => (pending = undefined), 0));
        const value = await pending.catch(() => undefined);
        if (value?.[key] !== undefined) this.set(value[key]);
      },
    });
  }
  let fresh: Promise<Freshness> | undefined;
  for (const [name, label, help, value] of FRESHNESS) {
    new Gauge({
      name: `${prefix}_${name}`,
      help,
      labelNames: [label],
      registers: [shared],
      async collect() {
        fresh ??= freshness().finally(() => setTimeout(() => (fresh = undefined), 0));
        const known = await fresh.catch((): Freshness => ({}));
        const found = value(known);
        this.reset();
        if (found !== undefined && known[label] !== undefined) this.set({ [label]: known[label] }, found);
      },
    });
  }
  const requests = new Histogram({
    name: `${prefix}_http_request_duration_seconds`,
    help: 'HTTP request duration by route pattern, method and status.',
    labelNames: ['route', 'method', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const es = new Histogram({
    name: `${prefix}_elasticsearch_request_duration_seconds`,
    help: 'Elasticsearch request duration by index and outcome.',
    labelNames: ['index', 'outcome'],
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  let cacheStats: (() => CacheStats) | undefined;
  /** A counter or gauge read at scrape time from what a component counts itself; no sample until it reports. */
  const reading = (Metric: typeof Gauge | typeof Counter, name: string, help: string, read: () => number | undefined) =>
    new Metric({
      name: `${prefix}_${name}`,
      help,
      registers: [registry],
      collect(this: Gauge | Counter) {
        const value = read();
        if (value === undefined) return;
        this.reset();
        this.inc(value);
      },
    });
  const counted: [keyof CacheStats, string][] = [
    ['hits', 'Requests answered from the response cache.'],
    ['misses', 'Requests the response cache did not hold, answered from Elasticsearch.'],
    ['coalesced', 'Requests that waited for an identical one in flight instead of asking Elasticsearch.'],
    ['evictions', 'Answers dropped from the response cache to stay within its size.'],
  ];
  for (const [key, help] of counted) reading(Counter, `response_cache_${key}_total`, help, () => cacheStats?.()[key]);
  reading(Gauge, 'response_cache_bytes', 'Bytes the response cache holds (bodies as sent, keys and bookkeeping).', () => cacheStats?.().bytes);
  let earlyCount: (() => number) | undefined;
  reading(
    Counter,
    'http_early_refusals_total',
    'Refusals answered before the middleware chain: 429 to clients over their budget, 503 while admission control is saturated (not in the request log nor the duration histogram).',
    () => earlyCount?.(),
  );
  let connectionsRefused: (() => number) | undefined;
  reading(Counter, 'connections_refused_total', 'Connections reset as soon as accepted, their client address holding MAX_CONNECTIONS_PER_CLIENT already (no request read).', () => connectionsRefused?.());
  let admissionStats: (() => AdmissionStats) | undefined;
  const admitted: [keyof AdmissionStats, string, string, typeof Gauge | typeof Counter][] = [
    ['inFlight', 'admission_in_flight', 'Elasticsearch requests running under admission control.', Gauge],
    ['queued', 'admission_queued', 'Requests waiting for a slot.', Gauge],
    ['refused', 'admission_refused_total', 'Requests admission control refused with 503 overloaded (a full queue, a waiter displaced or out of time), before Koa or after.', Counter],
  ];
  for (const [key, name, help, Metric] of admitted) reading(Metric, name, help, () => admissionStats?.()[key]);
  const admissionWait = new Histogram({
    name: `${prefix}_admission_wait_seconds`,
    help: 'How long requests admitted through the queue waited for a slot (those started at once are not counted).',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [registry],
  });
  let streamStats: (() => { open: number; cut: number }) | undefined;
  reading(Gauge, 'streams_open', 'Event streams (/v1/killmails/stream, /v1/events/stream) open.', () => streamStats?.().open);
  reading(Counter, 'streams_cut_total', 'Event streams cut because their client did not read what it was sent.', () => streamStats?.().cut);
  const both = Registry.merge([registry, shared]);
  let scrape = () => both.metrics();
  return {
    registry,
    shared,
    scrape: () => scrape(),
    scrapeFrom: (read) => (scrape = read),
    observeAdmission: (admission) => (admissionStats = admission && (() => admission.stats())),
    observeAdmissionWait: (seconds) => admissionWait.observe(seconds),
    observeConnectionCap: (cap) => (connectionsRefused = cap && (() => cap.refused())),
    observeStreams: (streams) => (streamStats = streams && (() => streams.stats())),
    observeEarlyRefusals: (early) => (earlyCount = early && (() => early.count())),
    observeCache: (cache) => (cacheStats = cache && (() => cache.stats())),
    observeRequest: (route, method, status, seconds) => requests.observe({ route, method, status: String(status) }, seconds),
    observeEs: (index, seconds, ok) => es.observe({ index, outcome: ok ? 'ok' : 'error' }, seconds),
  };
}
