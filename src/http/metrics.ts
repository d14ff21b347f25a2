/**
 * Prometheus metrics on the gateway's own registry (never prom-client's global one):
 * default process metrics, request duration by route pattern (never the raw URL), ES
 * request duration by index, and unlabelled gauges `<prefix>_build_info` and
 * `<prefix>_<key>` (row counts), the shape the reference's explorer parses
 * (`^blackrelay_api_([a-z_]+)\s+(\d+)$` with the prefix set to `blackrelay_api`).
 */
import { Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  readonly registry: Registry;
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  observeEs(index: string, seconds: number, ok: boolean): void;
}

/** A row-count gauge: `<prefix>_<key>`, unlabelled. */
export interface CountGauge {
  key: string;
  help: string;
}

/** Supplies the row-count gauges at scrape time: key (`entities`, `current_characters`, ...) → count. */
export type CountSource = () => Promise<Record<string, number>>;

export function createMetrics(prefix: string, gauges: readonly CountGauge[], counts: CountSource): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: `${prefix}_` });
  new Gauge({ name: `${prefix}_build_info`, help: 'Always 1; the gateway is running.', registers: [registry] }).set(1);
  // One scrape reads the counts once, whatever the number of gauges.
  let pending: Promise<Record<string, number>> | undefined;
  for (const { key, help } of gauges) {
    new Gauge({
      name: `${prefix}_${key}`,
      help,
      registers: [registry],
      async collect() {
        pending ??= counts().finally(() => setTimeout(() => (pending = undefined), 0));
        const value = await pending.catch(() => undefined);
        if (value?.[key] !== undefined) this.set(value[key]);
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
  return {
    registry,
    observeRequest: (route, method, status, seconds) => requests.observe({ route, method, status: String(status) }, seconds),
    observeEs: (index, seconds, ok) => es.observe({ index, outcome: ok ? 'ok' : 'error' }, seconds),
  };
}
