/**
 * Starts the gateway: reads the config once, connects to Elasticsearch (ES_URL, or the one
 * `npm start` provided) and listens. `startServer` is also what tests and benchmarks use;
 * `serve` is the process around it (`node src/server.ts`, `npm start`): one clear line when the
 * port is taken, and a bounded graceful stop on SIGTERM/SIGINT.
 */
import cluster from 'node:cluster';
import { type Server, createServer } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { type Config, loadConfigOrExit } from './config.ts';
import { type ComposeOptions, composeGateway } from './compose.ts';
import { capConnections } from './http/connection-cap.ts';
import { clientErrorHandler } from './http/middleware/client-error.ts';
import { tellPrimary } from './workers/messages.ts';
import { runPrimary } from './workers/primary.ts';

export interface RunningServer {
  server: Server;
  url: string;
  logger: Logger;
  /**
   * Stops accepting connections and closes idle ones at once; requests in flight finish, each
   * connection closing when its response is done. Whatever is still open after `timeoutMs`
   * (default `SHUTDOWN_TIMEOUT_MS`) is closed. Resolves with the number of connections that
   * had to be cut. The log's buffered lines are written out before it resolves.
   */
  close(timeoutMs?: number): Promise<{ cut: number }>;
  /** Writes out the log's buffered lines (the request log is written asynchronously, src/http/logger.ts). */
  flushLog(): Promise<void>;
}

export type ServerOptions = ComposeOptions;

/** The gateway could not listen (port taken, no permission): the message says it all. */
export class ListenError extends Error {
  override name = 'ListenError';
}

export async function startServer(config: Readonly<Config>, esUrl: string, options: ServerOptions = {}): Promise<RunningServer> {
  const gateway = await composeGateway(config, esUrl, options);
  const { app, earlyRefusal, logger, metrics, streams } = gateway;
  const closing = gateway.deps.stopping;
  const handle = app.callback();
  const server = createServer((request, response) => {
    const early = earlyRefusal ? earlyRefusal.handle(request, response) : false;
    if (early === false) void handle(request, response);
    else {
      // A refusal that could not be answered (its budget unreadable) is left to the full stack.
      const full = () => void handle(request, response);
      early.then((answered) => answered || full(), full);
    }
  });
  // Before any other 'connection' listener: it gates the HTTP parser's.
  if (config.maxConnectionsPerClient !== undefined) metrics.observeConnectionCap(capConnections(server, config.maxConnectionsPerClient, gateway.deps.rules));
  server.on('clientError', clientErrorHandler(gateway.deps.meta, logger));
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  server.on('request', (_request, response) => {
    // Stopping: a request that came on a kept-alive connection is answered, and tells its client
    // not to send another on it (the connection closes after the answer).
    if (closing() && !response.headersSent) response.setHeader('Connection', 'close');
    response.once('finish', () => {
      // A keep-alive connection whose response ends during shutdown would otherwise idle for
      // keepAliveTimeout before the server lets go of it.
      if (closing()) setImmediate(() => server.closeIdleConnections());
    });
  });
  try {
    await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject).listen(config.port, config.host));
  } catch (error) {
    await gateway.release();
    throw listenError(error as NodeJS.ErrnoException, config);
  }

  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  return {
    server,
    url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
    logger,
    flushLog: gateway.flushLog,
    async close(timeoutMs = config.shutdownTimeoutMs) {
      gateway.markStopping();
      // Streams never finish on their own: they end now, and their clients reconnect elsewhere with their last id.
      streams.close();
      let cut = 0;
      const deadline = setTimeout(() => {
        cut = open.size;
        logger.warn({ connections: cut, timeoutMs }, 'shutdown deadline reached: closing the connections still open');
        server.closeAllConnections();
      }, timeoutMs);
      // close() also closes the idle keep-alive connections (Node >= 19).
      await new Promise<void>((resolve) => server.close(() => resolve()));
      clearTimeout(deadline);
      // The client would wait for the ES requests of the connections just cut; the process is
      // about to exit and drops them anyway.
      await gateway.release({ keepClient: cut > 0 });
      await gateway.flushLog();
      return { cut };
    },
  };
}

/** Listen failures a user can act on → one sentence naming the variable to change. */
function listenError(error: NodeJS.ErrnoException, config: Readonly<Config>): Error {
  const { host, port } = config;
  if (error.code === 'EADDRINUSE') return new ListenError(`Port ${port} on ${host} is already in use (another gateway?): stop it or set PORT.`);
  if (error.code === 'EACCES') return new ListenError(`No permission to listen on port ${port} of ${host}: set PORT above 1023.`);
  if (error.code === 'EADDRNOTAVAIL') return new ListenError(`${host} is not an address of this machine: check HOST.`);
  return error;
}

export interface ServeOptions {
  /** Appended to the "listening" line. */
  note?: string;
  /** Runs after the gateway stopped, before the process exits. */
  onStopped?: () => void;
}

/**
 * Runs the gateway as the process: prints where it listens; a `ListenError` is one line on
 * stderr and exit code 1; SIGTERM/SIGINT stop it within `SHUTDOWN_TIMEOUT_MS` and exit 0 (a
 * second signal exits at once). With `WORKERS` above 1 this process becomes their primary
 * (src/workers/primary.ts), and each worker it forks runs this function as one of them.
 */
export async function serve(config: Readonly<Config>, esUrl: string, options: ServeOptions = {}): Promise<void> {
  if (config.workers > 1 && cluster.isPrimary) return runPrimary(config, esUrl, options);
  const worker = cluster.isWorker;
  let running: RunningServer;
  try {
    running = await startServer(config, esUrl);
  } catch (error) {
    if (!(error instanceof ListenError)) throw error;
    if (worker) tellPrimary({ type: 'listen-error', message: error.message });
    else console.error(error.message);
    process.exit(1);
  }
  let stopping = false;
  const stop = async (signal: NodeJS.Signals | 'disconnect') => {
    if (stopping) {
      // The primary forwards one SIGTERM and handles a second signal itself (SIGKILL).
      if (worker) return;
      options.onStopped?.();
      process.exit(1);
    }
    stopping = true;
    running.logger.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'stopping: no new connections, finishing requests in flight');
    await running.close();
    running.logger.info('stopped');
    // The request lines of the last responses are still in the log's buffer.
    await running.flushLog();
    options.onStopped?.();
    process.exit(0);
  };
  if (worker) {
    // Ctrl-C reaches the whole process group: the worker waits for its primary's SIGTERM instead.
    process.on('SIGINT', () => {});
    process.on('SIGTERM', () => void stop('SIGTERM'));
    // The primary is gone (killed): nobody restarts or aggregates any more, so stop too.
    process.on('disconnect', () => void stop('disconnect'));
    tellPrimary({ type: 'listening', url: running.url });
    return;
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, (received) => void stop(received));
  // Only now: whoever waits for this line may signal at once.
  console.log(`registry gateway listening on ${running.url}/v1${options.note ? ` ${options.note}` : ''}`);
}

if (import.meta.main) {
  const config = loadConfigOrExit();
  if (!config.esUrl) {
    console.error('ES_URL is not set: run `npm start` (it provides Elasticsearch) or set ES_URL.');
    process.exit(2);
  }
  await serve(config, config.esUrl);
}
