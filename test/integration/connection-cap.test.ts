/**
 * The cap on connections per client address (MAX_CONNECTIONS_PER_CLIENT=3) on a real gateway,
 * clients on distinct loopback addresses over raw sockets: the 4th connection held at once from
 * one address is reset without an HTTP answer while another address is still answered; once one
 * closes, a new one is accepted; a trusted proxy is exempt; /metrics counts every refusal.
 */
import { type Socket, connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { getFrom } from '../support/loopback-client.ts';

let gw: TestGateway | undefined;
let port: number;
const held: Socket[] = [];

beforeAll(async () => {
  gw = await startTestGateway({ name: 'connection-cap', scale: 1, seed: 38, env: { MAX_CONNECTIONS_PER_CLIENT: '3', TRUSTED_PROXIES: '127.0.0.7' } });
  port = Number(new URL(gw.url).port);
  gateway = gw;
}, 300_000);

afterAll(async () => {
  for (const socket of held) socket.destroy();
  await gw?.close();
});

/** The gateway, for the tests (the last one closes it). */
let gateway: TestGateway;

const REQUEST = 'GET /v1/health HTTP/1.1\r\nHost: gateway\r\n\r\n';

/** A keep-alive connection from `from` that got its answer (so the gateway accepted and parsed it), left open. */
function hold(from: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: from }, () => socket.write(REQUEST));
    socket.once('data', (chunk: Buffer) => {
      if (!chunk.toString('latin1').startsWith('HTTP/1.1 200')) return reject(new Error(`unexpected answer: ${chunk.toString('latin1').slice(0, 40)}`));
      held.push(socket);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Connects from `from`, sends a request, and reports what came back before the connection ended. */
function attempt(from: string): Promise<{ bytes: number; error: string | undefined }> {
  return new Promise((resolve) => {
    let bytes = 0;
    let error: string | undefined;
    const socket = connect({ port, host: '127.0.0.1', localAddress: from }, () => socket.write(REQUEST));
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      // Answered: this connection was accepted.
      socket.destroy();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on('close', () => resolve({ bytes, error }));
  });
}

/** Ends `socket` and waits for the gateway's side to close too. */
function release(socket: Socket): Promise<void> {
  held.splice(held.indexOf(socket), 1);
  return new Promise((resolve) => {
    socket.once('close', () => resolve());
    socket.end();
  });
}

async function refusedOnMetrics(): Promise<number> {
  const text = (await gateway.get('/metrics')).text;
  const line = new RegExp(`^${gateway.config.metricsPrefix}_connections_refused_total (\\d+)$`, 'm').exec(text);
  return line ? Number(line[1]) : 0;
}

describe('connections per client address', () => {
  let refused = 0;

  it('resets the 4th connection from one address without an answer, while another address is answered', async () => {
    const first = await Promise.all([hold('127.0.0.5'), hold('127.0.0.5'), hold('127.0.0.5')]);
    expect(first).toHaveLength(3);

    const fourth = await attempt('127.0.0.5');
    expect(fourth.bytes).toBe(0);
    expect(fourth.error).toBe('ECONNRESET');
    refused += 1;
    const again = await attempt('127.0.0.5');
    expect(again).toEqual({ bytes: 0, error: 'ECONNRESET' });
    refused += 1;

    for (let i = 0; i < 3; i += 1) expect((await getFrom('127.0.0.6', `${gateway.url}/v1/health`)).status).toBe(200);
  });

  it('accepts a new connection from that address once one of its connections closes', async () => {
    await release(held.find((socket) => socket.localAddress === '127.0.0.5')!);
    // The gateway learns of the close an instant after the client does: a try that still finds it
    // counted is a refusal like any other.
    for (let tries = 0; ; tries += 1) {
      expect(tries).toBeLessThan(50);
      const next = await hold('127.0.0.5').catch((error: NodeJS.ErrnoException) => error.code);
      if (typeof next !== 'string') break;
      expect(next).toBe('ECONNRESET');
      refused += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await attempt('127.0.0.5')).toEqual({ bytes: 0, error: 'ECONNRESET' });
    refused += 1;
  });

  it('exempts a trusted proxy, which carries many clients', async () => {
    await Promise.all(Array.from({ length: 5 }, () => hold('127.0.0.7')));
    expect((await attempt('127.0.0.7')).bytes).toBeGreaterThan(0);
  });

  it('counts every refused connection on /metrics', async () => {
    expect(refused).toBeGreaterThanOrEqual(3);
    expect(await refusedOnMetrics()).toBe(refused);
  });

  it('closes every connection it holds on shutdown', async () => {
    expect(held.length).toBe(8);
    const closed = held.map((socket) => new Promise((resolve) => socket.once('close', resolve)));
    const running = gateway;
    gw = undefined;
    await running.close();
    await Promise.all(closed);
  });
});
