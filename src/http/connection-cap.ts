/**
 * A cap on the connections one client address holds open (`MAX_CONNECTIONS_PER_CLIENT`): a
 * connection over it is reset as soon as it is accepted, before the HTTP server attaches its
 * parser — no request is read, parsed, logged or answered. A client that opens a connection per
 * request, many at once, otherwise costs the gateway's one thread a parse and an answer each
 * (even an early 429, src/http/early-refusal.ts), on the cores Elasticsearch needs.
 *
 * How: the HTTP server keeps listening itself (its connection tracking, header and request
 * timeouts and `closeIdleConnections` only run on a listening server), and its own 'connection'
 * listener — the one that attaches the parser — is replaced by a gate that calls it only for
 * connections under the cap. Other 'connection' listeners (the shutdown's tracking in
 * src/server.ts) still see every connection, refused ones included.
 *
 * - The address is keyed as client-identity keys it (`::ffff:` mapping removed, an IPv6 client
 *   by its /64), from the peer only: forwarded headers cannot be read before a request is.
 * - Peers in `TRUSTED_PROXIES` are exempt: a proxy carries many clients' connections.
 * - Loopback is not exempt: on this host it is monitoring, a sidecar or a local proxy; a proxy
 *   belongs in `TRUSTED_PROXIES`, and the benchmarks' clients are loopback addresses.
 * - A refusal is a reset (RST), not a close: nothing of the socket lingers in TIME_WAIT on the
 *   gateway's side, and the client learns at once.
 * - Per process: each worker of a cluster counts its own connections.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { type IdentityRules, clientIdentity } from '../limits/client-identity.ts';
import { Tally } from '../limits/tally.ts';

export interface ConnectionCap {
  /** Connections reset at accept since start. */
  refused(): number;
  /** Connections open per client key (under the cap; exempt peers not counted). */
  open(): ReadonlyMap<string, number>;
}

/** Gates `server`'s HTTP parser behind a cap of `max` open connections per client address. */
export function capConnections(server: Server, max: number, rules: IdentityRules): ConnectionCap {
  const listeners = server.listeners('connection');
  // The HTTP server's own listener is its only one until others are added: gate it before they are.
  if (listeners.length !== 1) throw new Error(`capConnections: expected the HTTP server's one 'connection' listener, found ${listeners.length}`);
  const attachParser = listeners[0] as (socket: Socket) => void;
  server.removeListener('connection', attachParser);
  const open = new Tally();
  let refused = 0;
  server.prependListener('connection', function gate(this: Server, socket: Socket) {
    const peer = socket.remoteAddress;
    // Already gone (reset before it was handed over): the parser sees its end at once.
    if (peer === undefined) return attachParser.call(this, socket);
    const client = clientIdentity({ peer }, rules);
    if (rules.trusted(client.address)) return attachParser.call(this, socket);
    if (open.of(client.key) >= max) {
      refused += 1;
      socket.resetAndDestroy();
      return;
    }
    open.add(client.key);
    socket.once('close', () => open.remove(client.key));
    attachParser.call(this, socket);
  });
  return { refused: () => refused, open: () => open.entries() };
}
