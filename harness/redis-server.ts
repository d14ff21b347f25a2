/**
 * A real Redis server (Debian's `redis-server`) on a free loopback port, for the budget shared
 * by several gateways (RATE_LIMIT_STORE). `stop()` ends it and `start()` brings it back on the
 * same port, as an outage would. Nothing is written to disk.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

export const REDIS_SERVER = '/usr/bin/redis-server';

export function redisServerInstalled(): boolean {
  try {
    execFileSync(REDIS_SERVER, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface RedisServer {
  url: string;
  /** The server's process while it runs (a rehearsal stops and continues it). */
  pid(): number | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}`,
    pid: () => (child && child.exitCode === null && child.signalCode === null ? child.pid : undefined),
    async start() {
      child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      await new Promise<void>((resolve, reject) => {
        child!.stdout!.on('data', (chunk) => {
          out += chunk;
          if (out.includes('Ready to accept connections')) resolve();
        });
        child!.once('exit', (code) => reject(new Error(`redis-server exited ${code}: ${out}`)));
      });
      child.stdout!.resume();
    },
    async stop() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
  await server.start();
  return server;
}
