/**
 * The loader CLI (`loader/cli.ts`) in a process of its own, as tests, benches and scripts run
 * it: a one-shot run (a load, `--rollback`, `--list`) or a follower. The child's environment is
 * this process's with `env` over it (ES_URL, INDEX_PREFIX, DATA_DIR, the store's AWS_* names …).
 */
import { type ChildProcess, type SpawnSyncReturns, type StdioOptions, spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { PROJECT_ROOT } from '../src/config.ts';

export const LOADER_CLI = path.join(PROJECT_ROOT, 'loader', 'cli.ts');

export interface LoaderProcessOptions {
  /** Node's own flags (harness/listener.ts's NODE_ARGS: as `npm run load` runs it). */
  nodeArgs?: readonly string[];
  stdio?: StdioOptions;
  /** The environment the child starts from (this process's by default), `env` over it. */
  baseEnv?: NodeJS.ProcessEnv;
}

/** Starts the loader with these arguments. */
export function spawnLoader(args: readonly string[], env: Record<string, string>, options: LoaderProcessOptions = {}): ChildProcess {
  const { nodeArgs = [], stdio = 'ignore', baseEnv = process.env } = options;
  return spawn(process.execPath, [...nodeArgs, LOADER_CLI, ...args], { env: { ...baseEnv, ...env }, stdio });
}

/** Runs the loader to its end: its exit status and its stdout and stderr as text. */
export function runLoader(args: readonly string[], env: Record<string, string>, options: { timeoutMs?: number; baseEnv?: NodeJS.ProcessEnv } = {}): SpawnSyncReturns<string> {
  const { timeoutMs = 120_000, baseEnv = process.env } = options;
  return spawnSync(process.execPath, [LOADER_CLI, ...args], { env: { ...baseEnv, ...env }, encoding: 'utf8', timeout: timeoutMs });
}

/** Runs the loader to its end, without waiting on its output: its exit code. */
export function loaderExit(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', resolve));
}

export interface FollowerOptions {
  /** How often it checks the source (`--every`); every second by default, so that a run need not wait. */
  every?: string;
  nodeArgs?: readonly string[];
  /** Each line it logs. */
  onLine?: (line: string) => void;
}

/** A follower of `source` (`npm run load -- --follow <source> --every <every>`): its log (stderr) is handed over line by line; its stdout is not read. */
export function spawnFollower(source: string, env: Record<string, string>, options: FollowerOptions = {}): ChildProcess {
  const { every = '1s', nodeArgs = [], onLine } = options;
  const follower = spawnLoader(['--follow', source, '--every', every], env, { nodeArgs, stdio: ['ignore', 'ignore', 'pipe'] });
  const lines = createInterface({ input: follower.stderr! });
  if (onLine) lines.on('line', onLine);
  return follower;
}
