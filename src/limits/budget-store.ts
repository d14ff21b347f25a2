/**
 * The connection to the store several gateways keep their rate-limit budgets in
 * (`RATE_LIMIT_STORE`, Redis or Valkey: ./points.ts). It never makes a request wait on the store:
 * commands are not queued while it is away and fail after `COMMAND_TIMEOUT_MS`, and the budget
 * then answers from this gateway's own counters. The outage and the recovery are logged once each.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** A spend the store has not answered by then is spent locally instead. */
const COMMAND_TIMEOUT_MS = 250;

export interface BudgetStore {
  redis: Redis;
  close(): Promise<void>;
}

/** Connects; resolves once the store answered or refused the first attempt (at most `connectMs`): a reachable store is used from the first request. */
export async function connectBudgetStore(url: string, logger: Logger, connectMs = 2000): Promise<BudgetStore> {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: connectMs,
    // Reconnect forever, at most every 2 s: the store coming back ends the outage by itself.
    retryStrategy: (attempt) => Math.min(2000, attempt * 200),
  });
  const where = new URL(url).host;
  let down = false;
  redis.on('error', (error: Error) => {
    if (down) return;
    down = true;
    logger.warn({ store: where, err: error.message }, 'rate-limit store unreachable: budgets are kept by this gateway until it is back');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    logger.info({ store: where }, 'rate-limit store reachable again: budgets are shared');
  });
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done).off('error', done);
      resolve();
    };
    const timer = setTimeout(done, connectMs);
    redis.once('ready', done).once('error', done);
  });
  return {
    redis,
    async close() {
      redis.disconnect();
    },
  };
}
