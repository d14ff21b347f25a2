/**
 * A gateway process (harness/gateway-process.ts) being stopped, as the tests watch it: raw
 * connections to it, whether it still accepts new ones, and SIGTERM with a download in flight.
 */
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { type Socket, connect } from 'node:net';
import path from 'node:path';
import { expect } from 'vitest';
import type { GatewayProcess } from '../../harness/gateway-process.ts';
import type { TcpProxy } from './tcp-proxy.ts';

/** A raw connection; `closed` resolves when the server ends it. */
export async function openSocket(url: string): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const { port, hostname } = new URL(url);
  const socket = connect(Number(port), hostname);
  let received = '';
  socket.on('data', (chunk) => (received += chunk));
  socket.on('error', () => {});
  const closed = once(socket, 'close').then(() => undefined);
  await once(socket, 'connect');
  return { socket, received: () => received, closed };
}

/** Whether a new connection to `url` is refused (the server stopped listening). */
export async function refused(url: string): Promise<boolean> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/**
 * SIGTERM with a request in flight: a download held back by `proxy` (Elasticsearch's answer),
 * the signal, then `whileStopping` (the caller's own checks); the gateway must stop listening
 * yet stay up, answer the download in full once released, and exit 0.
 */
export async function stopsWithDownloadInFlight(gateway: GatewayProcess, proxy: TcpProxy, bundleDir: string, whileStopping: () => Promise<void> = async () => {}): Promise<void> {
  const url = await gateway.listening;
  proxy.hold();
  const inFlight = fetch(`${url}/v1/exports/manifest.json`).then(async (res) => ({ status: res.status, text: await res.text() }));
  await proxy.holding();
  gateway.child.kill('SIGTERM');
  await whileStopping();
  while (!(await refused(url))) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(gateway.child.exitCode).toBeNull();
  proxy.release();
  const answered = await inFlight;
  expect(answered.status).toBe(200);
  expect(answered.text).toBe(await readFile(path.join(bundleDir, 'manifest.json'), 'utf8'));
  expect(await gateway.exited).toBe(0);
}
