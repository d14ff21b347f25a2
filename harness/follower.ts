/**
 * The loader following a source (`npm run load -- --follow <source> --every <every>`), a process
 * of its own. Its log (stderr) is handed over line by line; its stdout is not read.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { PROJECT_ROOT } from '../src/config.ts';

export interface FollowerOptions {
  /** How often it checks the source (`--every`); every second by default, so that a run need not wait. */
  every?: string;
  /** Node's own flags (harness/listener.ts's NODE_ARGS: as `npm run load` runs it). */
  nodeArgs?: readonly string[];
  /** Each line it logs. */
  onLine?: (line: string) => void;
}

/** Starts a follower of `source` with `env` over this process's environment (ES_URL, INDEX_PREFIX, the store's AWS_* names …). */
export function spawnFollower(source: string, env: Record<string, string>, options: FollowerOptions = {}): ChildProcess {
  const { every = '1s', nodeArgs = [], onLine } = options;
  const follower = spawn(process.execPath, [...nodeArgs, path.join(PROJECT_ROOT, 'loader', 'cli.ts'), '--follow', source, '--every', every], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lines = createInterface({ input: follower.stderr! });
  if (onLine) lines.on('line', onLine);
  return follower;
}
