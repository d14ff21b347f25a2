/**
 * A Node script in its own process that serves HTTP — the gateway, or a benchmark's stand-in for
 * part of it — started as the image and `npm start` run the gateway, and known by the URL it
 * prints. Its stderr is the caller's; its stdout (the request log) is drained unread, or
 * appended to `logFile` where one is named (a run that must show later why a gateway answered).
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { whenListening } from './listening.ts';

/** The V8 flag package.json's scripts and the image run Node with (Dockerfile: why 8 MB semi-spaces). */
export const NODE_ARGS: readonly string[] = ['--max-semi-space-size=8'];

export interface Listener {
  url: string;
  pid: number;
  /** SIGTERM, resolved once it has exited. */
  stop(): Promise<void>;
}

/** Starts `script` with `env` over this process's environment; resolves once it prints `listening on <url>/v1`. */
export async function spawnListener(script: string, env: Record<string, string>, logFile?: string): Promise<Listener> {
  const child = spawn(process.execPath, [...NODE_ARGS, script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  if (logFile) child.stdout!.pipe(createWriteStream(logFile, { flags: 'a' }));
  const url = await whenListening(child, path.basename(script));
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
