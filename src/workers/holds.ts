/**
 * Client holds (src/limits/holds.ts) counted for every worker by the primary: a worker asks it
 * when a download or a stream starts (one IPC round trip, beside a response that lasts seconds)
 * and tells it when that ends; the primary forgets whatever a worker held when the worker exits.
 */
import cluster, { type Worker } from 'node:cluster';
import { type Holds, holdKey, takeFrom } from '../limits/holds.ts';
import { Tally } from '../limits/tally.ts';
import { CHANNEL, type GatewayMessage, isGatewayMessage } from './messages.ts';

/** In the primary: the counts of every worker, and what each worker holds, forgotten when it exits. */
export function serveClusterHolds(): void {
  const tally = new Tally();
  const byWorker = new Map<Worker, Tally>();
  const send = (worker: Worker, message: GatewayMessage) => worker.isConnected() && worker.send(message);
  cluster.on('message', (worker, message: unknown) => {
    if (!isGatewayMessage(message)) return;
    if (message.type === 'take') {
      const held = takeFrom(tally, message.kind, message.key, message.limit);
      if (held !== undefined) {
        if (!byWorker.has(worker)) byWorker.set(worker, new Tally());
        byWorker.get(worker)!.add(holdKey(message.kind, message.key));
      }
      send(worker, { channel: CHANNEL, type: 'taken', id: message.id, held });
    } else if (message.type === 'give') {
      tally.remove(holdKey(message.kind, message.key));
      byWorker.get(worker)?.remove(holdKey(message.kind, message.key));
    }
  });
  cluster.on('exit', (worker) => {
    for (const [key, count] of byWorker.get(worker)?.entries() ?? []) for (let i = 0; i < count; i += 1) tally.remove(key);
    byWorker.delete(worker);
  });
}

/** In a worker: asks the primary. */
export function clusterHolds(): Holds {
  const waiting = new Map<number, (held: number | undefined) => void>();
  let next = 0;
  process.on('message', (message: unknown) => {
    if (!isGatewayMessage(message) || message.type !== 'taken') return;
    waiting.get(message.id)?.(message.held);
    waiting.delete(message.id);
  });
  return {
    take: (kind, key, limit) =>
      new Promise((resolve) => {
        const id = next++;
        waiting.set(id, resolve);
        process.send!({ channel: CHANNEL, type: 'take', id, kind, key, limit });
      }),
    give: (kind, key) => void process.send?.({ channel: CHANNEL, type: 'give', kind, key }),
  };
}
