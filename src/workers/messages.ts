/**
 * What a worker and its primary (src/workers/primary.ts) tell each other over the cluster's IPC
 * channel. The channel also carries rate-limiter-flexible's own messages: each side reads only
 * the messages whose `channel` is its own.
 */
export const CHANNEL = 'registry-gateway';

/** How a worker's start ended: listening (at `url`, the port every worker shares), or refused the port. */
export type Started = { type: 'listening'; url: string } | { type: 'listen-error'; message: string };

/** /metrics summed over workers (./metrics.ts): a worker's scrape, the primary collecting each worker's registry, the answers. */
type Scraping =
  | { type: 'scrape'; id: number }
  | { type: 'collect'; id: number }
  | { type: 'collected'; id: number; metrics?: unknown[]; error?: string }
  | { type: 'scraped'; id: number; body?: string; error?: string };

/** What clients hold across workers (./holds.ts): a worker takes one (answered `taken`, `held` undefined when refused) and gives it back. */
type Holding =
  | { type: 'take'; id: number; kind: string; key: string; limit: number }
  | { type: 'taken'; id: number; held?: number }
  | { type: 'give'; kind: string; key: string };

export type GatewayMessage = (Started | Scraping | Holding) & { channel: typeof CHANNEL };

/** Whether an IPC message is one of ours (either direction). */
export function isGatewayMessage(message: unknown): message is GatewayMessage {
  return typeof message === 'object' && message !== null && (message as { channel?: unknown }).channel === CHANNEL;
}

/** Sends `message` to the primary, when this process is a worker (a no-op otherwise). */
export function tellPrimary(message: Started): void {
  process.send?.({ channel: CHANNEL, ...message });
}
