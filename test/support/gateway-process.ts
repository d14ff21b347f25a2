/**
 * The gateway as users run it, a process of its own (`node src/server.ts`, `node scripts/start.ts`),
 * with raw connections to it: for what only a process shows — signals, exit codes, worker
 * processes sharing one port.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, readdir, readlink } from 'node:fs/promises';
import { type Socket, connect } from 'node:net';
import path from 'node:path';
import { expect } from 'vitest';
import { PROJECT_ROOT } from '../../src/config.ts';
import type { TcpProxy } from './tcp-proxy.ts';

export interface GatewayProcess {
  child: ChildProcess;
  /** Its address once it listens; rejects if it exits first. */
  listening: Promise<string>;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Runs `script` (relative to the project) with `env` over the inherited environment less ES_URL, on a free loopback port. */
export function spawnGatewayProcess(script: string, env: Record<string, string>, args: string[] = []): GatewayProcess {
  const { ES_URL: _unused, ...inherited } = process.env;
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, script), ...args], {
    env: { ...inherited, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', () => {
      const match = /listening on (http:\/\/\S+)\/v1/.exec(stdout);
      if (match) resolve(match[1]!);
    });
    void exited.then((code) => reject(new Error(`exited ${code} before listening:\n${stderr}`)));
  });
  listening.catch(() => {});
  return { child, listening, stdout: () => stdout, stderr: () => stderr, exited };
}

/** The worker processes of a gateway's primary (Linux: the children its main thread started); none once it is gone. */
export async function workerPids(primary: number): Promise<number[]> {
  const children = await readFile(`/proc/${primary}/task/${primary}/children`, 'utf8').catch(() => '');
  return children.trim().split(/\s+/).filter(Boolean).map(Number);
}

/** The processes among `pids` that hold a TCP connection from the IPv4 address `client` (read from /proc: its sockets and /proc/net/tcp). */
export async function pidsServing(pids: number[], client: string): Promise<number[]> {
  // /proc/net/tcp: "sl local rem st … inode"; addresses as little-endian hex with the port.
  const hex = client.split('.').map((n) => Number(n).toString(16).padStart(2, '0').toUpperCase()).reverse().join('');
  const table = await readFile('/proc/net/tcp', 'utf8');
  const inodes = new Set(table.split('\n').slice(1).map((line) => line.trim().split(/\s+/)).filter((f) => f[2]?.startsWith(`${hex}:`)).map((f) => f[9]));
  const serving: number[] = [];
  for (const pid of pids) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      if (inodes.has(/^socket:\[(\d+)\]$/.exec(target)?.[1])) {
        serving.push(pid);
        break;
      }
    }
  }
  return serving;
}

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
