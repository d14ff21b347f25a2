/**
 * How the connection cap keys and counts peers, on a stand-in for the HTTP server's listener
 * (the real gateway's behaviour is in test/integration/connection-cap.test.ts): an IPv4-mapped
 * address is its IPv4 client, an IPv6 client is its /64, trusted proxies are never counted, and a
 * closed connection frees its place.
 */
import { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import { describe, expect, it } from 'vitest';
import { capConnections } from '../../src/http/connection-cap.ts';
import { identityRules } from '../../src/limits/client-identity.ts';

class FakeSocket extends EventEmitter {
  reset = false;
  readonly remoteAddress: string;
  constructor(remoteAddress: string) {
    super();
    this.remoteAddress = remoteAddress;
  }
  resetAndDestroy() {
    this.reset = true;
  }
}

function gated(max: number, trusted: string[] = []) {
  const server = new EventEmitter();
  const parsed: FakeSocket[] = [];
  server.on('connection', (socket: FakeSocket) => parsed.push(socket));
  const cap = capConnections(server as unknown as Server, max, identityRules(trusted, []));
  const connect = (address: string) => {
    const socket = new FakeSocket(address);
    server.emit('connection', socket);
    return socket;
  };
  return { cap, parsed, connect };
}

describe('connection cap', () => {
  it('counts an IPv4-mapped address as its IPv4 client, and resets what is over the cap unparsed', () => {
    const { cap, parsed, connect } = gated(2);
    const [a, b] = [connect('127.0.0.5'), connect('::ffff:127.0.0.5')];
    const c = connect('127.0.0.5');
    expect([a.reset, b.reset, c.reset]).toEqual([false, false, true]);
    expect(parsed).toEqual([a, b]);
    expect(cap.refused()).toBe(1);
    expect(cap.open()).toEqual(new Map([['ip:127.0.0.5', 2]]));
  });

  it('counts an IPv6 client by its /64', () => {
    const { cap, connect } = gated(2);
    connect('2001:db8:1:2::1');
    connect('2001:db8:1:2:ffff::9');
    expect(connect('2001:db8:1:2::abcd').reset).toBe(true);
    expect(connect('2001:db8:1:3::1').reset).toBe(false);
    expect(cap.refused()).toBe(1);
  });

  it('frees a place when a connection closes', () => {
    const { cap, connect } = gated(1);
    const first = connect('192.0.2.1');
    expect(connect('192.0.2.1').reset).toBe(true);
    first.emit('close');
    expect(cap.open().size).toBe(0);
    expect(connect('192.0.2.1').reset).toBe(false);
  });

  it('never counts a trusted proxy', () => {
    const { cap, parsed, connect } = gated(1, ['10.0.0.0/8']);
    for (let i = 0; i < 5; i += 1) connect('10.1.2.3');
    expect(parsed).toHaveLength(5);
    expect(cap.refused()).toBe(0);
    expect(cap.open().size).toBe(0);
  });

  it('refuses to gate a server whose own connection listener it cannot tell apart', () => {
    const server = new EventEmitter();
    server.on('connection', () => {});
    server.on('connection', () => {});
    expect(() => capConnections(server as unknown as Server, 1, identityRules([], []))).toThrow(/one 'connection' listener/);
  });
});
