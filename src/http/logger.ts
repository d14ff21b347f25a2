/**
 * The gateway's logger: pino to stdout through an asynchronous sonic-boom destination that
 * gathers lines into writes of at least 4 KB (flushed every 200 ms when traffic is light), so
 * the request log costs a request its JSON line and no system call of its own; the writes run
 * on libuv's thread pool, never on the request path. `flush()` writes out whatever is buffered
 * and resolves once it is written: the shutdown calls it before the process exits, so the last
 * lines are not lost (pino's own exit hook writes out anything logged after it, synchronously).
 *
 * A destination passed in (tests capture lines) is used as it is.
 */
import { type DestinationStream, type Logger, pino } from 'pino';
import type { LogLevel } from '../config.ts';

/** Bytes gathered before a write, and the longest a line waits while traffic is light. */
const MIN_WRITE_BYTES = 4096;
const FLUSH_EVERY_MS = 200;
/** A stdout nobody reads can block forever: the shutdown waits this long at most. */
const FLUSH_TIMEOUT_MS = 2000;

export interface GatewayLogger {
  logger: Logger;
  /** Writes out the buffered lines; resolves when written (or after 2 s). */
  flush(): Promise<void>;
}

export function createLogger(level: LogLevel, destination?: DestinationStream): GatewayLogger {
  const stream = destination ?? pino.destination({ dest: 1, sync: false, minLength: MIN_WRITE_BYTES, periodicFlush: FLUSH_EVERY_MS });
  const logger = pino({ level }, stream);
  return {
    logger,
    flush: () =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, FLUSH_TIMEOUT_MS);
        logger.flush(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
