/**
 * /metrics for the whole gateway when it runs as several workers: the worker that serves a
 * scrape asks the primary, which asks every worker for what it counts itself and answers the sum
 * (prom-client's `AggregatorRegistry.aggregate`: counters and histograms added up, gauges added
 * unless a metric declares otherwise). The scraping worker adds what every worker would read
 * alike (build info, the row counts the registry's explorer shows, freshness: `Metrics.shared`),
 * read once rather than once per worker from Elasticsearch, as a probe (never queued or
 * refused by admission control, src/limits/admission.ts).
 */
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client';
import { CHANNEL, type GatewayMessage, isGatewayMessage } from './messages.ts';

type Collected = MetricObjectWithValues<MetricValue<string>>[];

/** prom-client's own limit for a worker's answer. */
const WORKER_TIMEOUT_MS = 5000;

/** In the primary: answers a worker's scrape with the sum over every worker. */
export function serveClusterMetrics(): void {
  let next = 0;
  const gathering = new Map<number, { answers: Collected[]; pending: number; done: (error?: string) => void }>();
  const send = (worker: Worker, message: GatewayMessage) => worker.isConnected() && worker.send(message);

  cluster.on('message', (worker, message: unknown) => {
    if (!isGatewayMessage(message)) return;
    if (message.type === 'collected') {
      const gather = gathering.get(message.id);
      if (!gather) return;
      if (message.metrics) gather.answers.push(message.metrics as Collected);
      gather.pending -= 1;
      if (message.error) gather.done(message.error);
      else if (gather.pending === 0) gather.done();
      return;
    }
    if (message.type !== 'scrape') return;
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && w.isConnected());
    const id = next++;
    const answer = (fields: { body?: string; error?: string }) => send(worker, { channel: CHANNEL, type: 'scraped', id: message.id, ...fields });
    const timer = setTimeout(() => gather.done('a worker did not answer in time'), WORKER_TIMEOUT_MS);
    const gather = {
      answers: [] as Collected[],
      pending: workers.length,
      done(error?: string) {
        clearTimeout(timer);
        if (!gathering.delete(id)) return;
        if (error) return answer({ error });
        AggregatorRegistry.aggregate(gather.answers).metrics().then((body) => answer({ body }), (failed: Error) => answer({ error: failed.message }));
      },
    };
    gathering.set(id, gather);
    for (const each of workers) send(each, { channel: CHANNEL, type: 'collect', id });
  });
}

/**
 * In a worker: answers the primary's requests for `registry`, and returns the scrape that reads
 * the sum over all workers.
 */
export function clusterScrape(registry: Registry, shared: Registry, timeoutMs = WORKER_TIMEOUT_MS + 1000): () => Promise<string> {
  const waiting = new Map<number, (answer: { body?: string; error?: string }) => void>();
  let next = 0;
  process.on('message', (message: unknown) => {
    if (!isGatewayMessage(message)) return;
    if (message.type === 'collect') {
      registry.getMetricsAsJSON().then(
        (metrics) => process.send?.({ channel: CHANNEL, type: 'collected', id: message.id, metrics }),
        (error: Error) => process.send?.({ channel: CHANNEL, type: 'collected', id: message.id, error: error.message }),
      );
    } else if (message.type === 'scraped') {
      waiting.get(message.id)?.(message);
      waiting.delete(message.id);
    }
  });
  const summed = () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error('the primary did not answer with the metrics in time'));
      }, timeoutMs);
      waiting.set(id, (answer) => {
        clearTimeout(timer);
        if (answer.body !== undefined) resolve(answer.body);
        else reject(new Error(answer.error ?? 'no metrics'));
      });
      process.send!({ channel: CHANNEL, type: 'scrape', id });
    });
  return async () => {
    const [sum, own] = await Promise.all([summed(), shared.metrics()]);
    return `${sum}${own}`;
  };
}
