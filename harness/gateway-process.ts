/**
 * The gateway as users run it, a process of its own (`node src/server.ts`, `node scripts/start.ts`),
 * two ways: quiet, for load (`spawnGateway`: its output drained unread), or with its output kept,
 * for what only a process shows and a test reads — signals, exit codes, logs, workers sharing one
 * port (`spawnGatewayProcess`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/config.ts';
import { whenListening } from './listening.ts';
import { type Listener, spawnListener } from './listener.ts';

/**
 * The settings a gateway under load runs with: the limits off — the per-client budget,
 * admission control (which gives one client 2 requests at Elasticsearch at once) and the
 * connection cap — because every connection of a load generator comes from 127.0.0.1 and what
 * is measured is raw speed; a caller's `env` sets them where it measures them.
 */
export const GATEWAY_ENV: Readonly<Record<string, string>> = { PORT: '0', LOG_LEVEL: 'warn', RATE_LIMIT: 'off', ES_MAX_IN_FLIGHT: 'off', MAX_CONNECTIONS_PER_CLIENT: 'off' };

/** Starts `src/server.ts` with GATEWAY_ENV and `env`; resolves once it listens. */
export function spawnGateway(env: Record<string, string>): Promise<Listener> {
  return spawnListener(path.join(PROJECT_ROOT, 'src', 'server.ts'), { ...GATEWAY_ENV, ...env });
}

export interface GatewayProcess {
  child: ChildProcess;
  /** Its address once it listens; rejects if it exits first. */
  listening: Promise<string>;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Runs `script` (relative to the project) with `env` over the inherited environment less ES_URL, on a free loopback port, keeping what it writes. */
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
  const listening = whenListening(child, path.basename(script), () => `:\n${stderr}`);
  listening.catch(() => {});
  return { child, listening, stdout: () => stdout, stderr: () => stderr, exited };
}
