/**
 * The gateway process: where it listens, how many processes serve the port, how it stops, and
 * what its answers, metrics, log and cursors say.
 */
import { availableParallelism } from 'node:os';
import { ConfigError, int, matching, oneOf, text } from './parse.ts';
import { type Setting, read, section } from './setting.ts';
import type { LogLevel } from './types.ts';

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Documented in the README: it keeps cursors unforgeable only once replaced by a secret of your own. */
export const DEFAULT_CURSOR_SECRET = 'registry-gateway-cursor-key';

/** `WORKERS`: a count, or `auto` for the cores Node may use. */
export function parseWorkers(raw: string): number {
  if (raw === 'auto') return availableParallelism();
  if (!/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > 256) throw new ConfigError(`WORKERS must be "auto" or an integer from 1 to 256, got "${raw}"`);
  return Number(raw);
}

/** The default metrics prefix of a registry name: `blackrelay-api` → `blackrelay_api`. */
export function metricsPrefixOf(registryName: string): string {
  const prefix = registryName.toLowerCase().replace(/[^a-z_]+/g, '_').replace(/^_+|_+$/g, '');
  return prefix === '' ? 'registry_api' : prefix;
}

const registryName: Setting<string> = {
  env: 'REGISTRY_NAME',
  default: 'blackrelay-api',
  parse: text,
  meaning: '`meta.registry` of every response',
  readBy: ['gateway'],
};

export const gateway = section({
  port: {
    env: 'PORT',
    default: 8080,
    parse: int(0, 65535),
    meaning: 'where the gateway listens (a port in use is one line on stderr and exit code 1)',
    readBy: ['gateway'],
  },
  host: { env: 'HOST', default: '127.0.0.1', parse: text, row: 'PORT', readBy: ['gateway'] },
  workers: {
    env: 'WORKERS',
    default: '1',
    documented: '`1` (`auto` in the image and compose)',
    parse: parseWorkers,
    meaning:
      'gateway processes on the port: a count, or `auto` for the cores Node may use (`availableParallelism()`). Above 1 a primary process forks them and serves no request; see *Workers and several gateways*',
    readBy: ['gateway'],
  },
  workerIndex: {
    env: 'WORKER_INDEX',
    parse: int(0, 255),
    meaning:
      "which worker this process is (0 … workers - 1), set by the primary in each worker's environment (src/workers/primary.ts): it picks the worker's share of machine-wide totals (ES_MAX_IN_FLIGHT, ES_QUEUE); unset in a single process",
    readBy: ['gateway'],
    internal: true,
  },
  shutdownTimeoutMs: {
    env: 'SHUTDOWN_TIMEOUT_MS',
    default: 10_000,
    parse: int(0, 600_000),
    meaning: 'on SIGTERM/SIGINT, how long requests in flight may take to finish; connections still open then are closed (`0` = at once)',
    readBy: ['gateway'],
  },
  registryName,
  defaultEnvironment: {
    env: 'DEFAULT_ENVIRONMENT',
    default: 'stillness',
    parse: text,
    meaning: 'environment of list routes without `environment`',
    readBy: ['gateway'],
  },
  metricsPrefix: {
    env: 'METRICS_PREFIX',
    // The registry's own explorer reads `<registry name>_<key>` lines (blackrelay_api_entities …).
    default: (env) => metricsPrefixOf(read(registryName, env)),
    documented: "the registry name's (`blackrelay-api` → `blackrelay_api`)",
    parse: matching(/^[a-z_][a-z_]*$/, 'lowercase letters and "_"'),
    meaning:
      "prefix of the `/metrics` names; the default is what the registry's own explorer reads (`^blackrelay_api_([a-z_]+)\\s+(\\d+…)$`) for its count badges",
    readBy: ['gateway'],
  },
  logLevel: {
    env: 'LOG_LEVEL',
    default: 'info',
    parse: oneOf(LOG_LEVELS),
    meaning: 'pino level (`silent` … `trace`); `info` includes the request log, `warn` turns it off',
    readBy: ['gateway'],
  },
  cursorSecret: {
    env: 'CURSOR_SECRET',
    default: DEFAULT_CURSOR_SECRET,
    parse: text,
    meaning:
      'HMAC key that signs cursors. The default is public: set a secret of your own in production (and the same one on every instance behind one address); changing it turns outstanding cursors into 400s',
    readBy: ['gateway'],
  },
});
