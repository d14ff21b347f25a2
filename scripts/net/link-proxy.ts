/**
 * A TCP proxy that is one bad link: a client is pointed at it (a gateway's `ES_URL`, a store
 * endpoint) instead of the server, and the link it stands for can be switched at any time:
 *
 * - `pass`: bytes go through as they come.
 * - `blackhole`: nothing goes through, either way, on open connections and on new ones (they
 *   are accepted, then nothing): what a cut link or a DROP rule does to a client, which waits
 *   until its own timeout. The proxy stops reading, so unread bytes wait in the kernel's buffers,
 *   and go through once healed, as TCP retransmission would deliver them.
 * - `slow`: every chunk arrives `delayMs` after it was sent (each way), and at most
 *   `bytesPerSecond` go through when given: a long or narrow link. Order is kept.
 *
 * This is how a root process is given a bad link: iptables tells processes apart by their user,
 * and a gateway or the store's clients run as root beside everything else of ours.
 */
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';

export type LinkState = { kind: 'pass' } | { kind: 'blackhole' } | { kind: 'slow'; delayMs: number; bytesPerSecond?: number };

export interface LinkProxy {
  /** Where clients connect: `http://host:port` (the target's path dropped). */
  url: string;
  port: number;
  state(): LinkState;
  set(state: LinkState): void;
  /** Connections open through it now. */
  connections(): number;
  close(): Promise<void>;
}

export interface LinkGroup {
  /** The proxies' URLs, in the order of the list given: an `ES_URL`. */
  urls: string;
  proxies: LinkProxy[];
  /** Sets every link of the group at once (a client cut from every node). */
  set(state: LinkState): void;
  close(): Promise<void>;
}

/** One proxy to `target` (`http://host:port` or `host:port`), listening on `host` (loopback). */
export async function startLinkProxy(target: string, host = '127.0.0.1'): Promise<LinkProxy> {
  const to = new URL(target.includes('://') ? target : `tcp://${target}`);
  let state: LinkState = { kind: 'pass' };
  const links = new Set<Link>();
  // Half-open allowed both ways: a client that ends its side still gets the answer.
  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = connect({ port: Number(to.port || 80), host: to.hostname, allowHalfOpen: true });
    const link = new Link(client, upstream, () => state);
    links.add(link);
    link.closed.then(() => links.delete(link));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    port,
    state: () => state,
    set(next) {
      state = next;
      for (const link of links) link.changed();
    },
    connections: () => links.size,
    async close() {
      const closing = new Promise((resolve) => server.close(resolve));
      for (const link of links) link.destroy();
      await closing;
    },
  };
}

/** A proxy for each URL of a comma-separated list (`ES_URL`'s form). */
export async function startLinkGroup(urls: string, host = '127.0.0.1'): Promise<LinkGroup> {
  const proxies = await Promise.all(urls.split(',').map((url) => startLinkProxy(url.trim(), host)));
  return {
    urls: proxies.map((proxy) => proxy.url).join(','),
    proxies,
    set: (state) => proxies.forEach((proxy) => proxy.set(state)),
    close: async () => void (await Promise.all(proxies.map((proxy) => proxy.close()))),
  };
}

/** One client connection and its upstream: two directions, each a queue under the link's state. */
class Link {
  private readonly directions: Direction[];
  readonly closed: Promise<void>;

  constructor(client: Socket, upstream: Socket, state: () => LinkState) {
    this.directions = [new Direction(client, upstream, state), new Direction(upstream, client, state)];
    let done = 0;
    this.closed = new Promise((resolve) => {
      for (const socket of [client, upstream]) {
        // A reset on either side ends both, as the end of the cable would.
        socket.once('error', () => this.destroy());
        socket.once('close', () => ++done === 2 && resolve());
      }
    });
    this.changed();
  }

  changed(): void {
    for (const direction of this.directions) direction.changed();
  }

  destroy(): void {
    for (const direction of this.directions) direction.destroy();
  }
}

/** Bytes from one socket to the other, released in order at the times the link's state gives. */
class Direction {
  private readonly queue: { chunk: Buffer | 'end'; at: number }[] = [];
  /** When the last queued chunk leaves the narrow part of the link (throttling). */
  private sentAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly from: Socket;
  private readonly to: Socket;
  private readonly state: () => LinkState;

  constructor(from: Socket, to: Socket, state: () => LinkState) {
    this.from = from;
    this.to = to;
    this.state = state;
    from.on('data', (chunk: Buffer) => this.push(chunk));
    from.once('end', () => this.push('end'));
    to.on('drain', () => this.changed());
  }

  private push(chunk: Buffer | 'end'): void {
    const state = this.state();
    const now = performance.now();
    let at = now;
    if (state.kind === 'slow') {
      const length = chunk === 'end' ? 0 : chunk.length;
      this.sentAt = Math.max(this.sentAt, now) + (state.bytesPerSecond ? (length / state.bytesPerSecond) * 1000 : 0);
      at = this.sentAt + state.delayMs;
    }
    // Never ahead of what is already queued, whatever the state was when it came.
    this.queue.push({ chunk, at: Math.max(at, this.queue.at(-1)?.at ?? 0) });
    this.flush();
  }

  changed(): void {
    const blocked = this.state().kind === 'blackhole' || this.to.writableNeedDrain;
    if (blocked) this.from.pause();
    else this.from.resume();
    this.flush();
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.state().kind === 'blackhole' || this.to.destroyed) return;
    const now = performance.now();
    while (this.queue.length && this.queue[0]!.at <= now) {
      const { chunk } = this.queue.shift()!;
      if (chunk === 'end') this.to.end();
      else if (!this.to.write(chunk)) this.from.pause();
    }
    if (this.queue.length) this.timer = setTimeout(() => this.flush(), this.queue[0]!.at - now);
  }

  destroy(): void {
    clearTimeout(this.timer);
    this.from.destroy();
    this.to.destroy();
  }
}
