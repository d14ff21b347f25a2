/**
 * A TCP forwarder in front of the run's real Elasticsearch, so a test can take "the cluster"
 * away from one gateway without disturbing the cluster every other test file shares:
 * `down()` cuts every connection and leaves the port with nothing listening (connections are
 * refused, as with a stopped node), `up()` listens on the same port again. `hold()` keeps the
 * cluster's answers back until `release()`, which makes a gateway request stay in flight for as
 * long as a test needs. Bytes pass through unchanged: every answer is the real cluster's.
 */
import { type Server, type Socket, connect, createServer } from 'node:net';

export interface TcpProxy {
  url: string;
  down(): Promise<void>;
  up(): Promise<void>;
  hold(): void;
  release(): void;
  /** Resolves once an answer is being held back (so a gateway request is in flight). */
  holding(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port: targetPort } = new URL(target);
  const sockets = new Set<Socket>();
  let held: (() => void)[] | undefined;
  let onHeld: (() => void) | undefined;

  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const serve = (client: Socket) => {
    const upstream = connect(Number(targetPort), hostname);
    track(client);
    track(upstream);
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      if (!held) return void client.write(chunk);
      held.push(() => client.write(chunk));
      onHeld?.();
    });
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      a.on('end', () => b.end());
      a.on('error', () => b.destroy());
      a.on('close', () => b.destroy());
    }
  };

  let server: Server = createServer(serve);
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
  const port = await listen(0);

  const release = () => {
    const pending = held ?? [];
    held = undefined;
    for (const write of pending) write();
  };
  const down = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    down,
    async up() {
      server = createServer(serve);
      await listen(port);
    },
    hold() {
      held ??= [];
    },
    release,
    holding() {
      return new Promise((resolve) => {
        if (held?.length) return resolve();
        onHeld = () => {
          onHeld = undefined;
          resolve();
        };
      });
    },
    async close() {
      release();
      await down();
    },
  };
}
