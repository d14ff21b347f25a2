/**
 * What one client may spend (src/limits): its budget and where budgets are kept, who the client
 * is, and the connections, downloads and rows it may hold.
 */
import { isIP } from 'node:net';
import { ConfigError, int, orOff, withoutCredentials } from './parse.ts';
import { section } from './setting.ts';
import type { RateLimit } from './types.ts';
import { POINTS_IN_WORDS } from '../limits/request-cost.ts';

/** 50 points per second per client, bursts of 100 (a detail read costs 1 point: src/limits/request-cost.ts). */
export const DEFAULT_RATE_LIMIT = '50/100';
/**
 * Connections per client address: above a browser's 6 per host and the 10–50 an HTTP client
 * pools, so only a client opening connections faster than it closes them (a script opening one
 * per request, many at once) meets it. Several people behind one NAT share it.
 */
export const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 32;
export const DEFAULT_DOWNLOAD_MAX_ROWS = 100_000;

/** `50/100` → 50 points per second, bursts of 100 (a window of 2 s); `off` → undefined. */
export function parseRateLimit(raw: string): RateLimit | undefined {
  if (raw.toLowerCase() === 'off') return undefined;
  const match = /^(\d{1,6})\s*\/\s*(\d{1,7})$/.exec(raw);
  const rate = Number(match?.[1]);
  const burst = Number(match?.[2]);
  if (!match || rate < 1 || burst < rate || burst % rate !== 0) {
    throw new ConfigError(`RATE_LIMIT must be "off" or <rate>/<burst> with burst a whole multiple of rate (e.g. 50/100), got "${raw}"`);
  }
  return { rate, burst, windowSeconds: burst / rate };
}

/** `RATE_LIMIT_STORE`: a redis:// or rediss:// URL (Redis or Valkey). */
export function parseStoreUrl(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!URL.canParse(raw) || !/^rediss?:$/.test(new URL(raw).protocol)) {
    throw new ConfigError(`RATE_LIMIT_STORE must be a redis:// or rediss:// URL, got "${withoutCredentials(raw)}"`);
  }
  return raw;
}

/** `TRUSTED_PROXIES`: addresses and CIDR blocks (IPv4 or IPv6), comma-separated; none when unset or empty. */
export function parseTrustedProxies(raw: string | undefined): string[] {
  if (!raw) return [];
  return raw.split(',').map((part) => {
    const entry = part.trim();
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const max = family === 6 ? 128 : 32;
    if (!family || extra !== undefined || (bits !== undefined && (!/^\d{1,3}$/.test(bits) || Number(bits) > max))) {
      throw new ConfigError(`TRUSTED_PROXIES must list IP addresses or CIDR blocks (10.0.0.0/8, ::1), got "${entry}"`);
    }
    return entry;
  });
}

/** `API_KEYS`: comma-separated keys of at least 16 characters (a short key is guessable, and guessing one buys a budget). */
function apiKeys(raw: string): string[] {
  if (!raw) return [];
  const keys = raw.split(',').map((key) => key.trim());
  if (keys.some((key) => !/^[\x21-\x7e]{16,200}$/.test(key))) throw new ConfigError('API_KEYS must be comma-separated keys of 16 to 200 printable characters');
  return keys;
}

export const limits = section({
  rateLimit: {
    env: 'RATE_LIMIT',
    default: DEFAULT_RATE_LIMIT,
    parse: parseRateLimit,
    meaning:
      `per-client budget, \`<rate>/<burst>\`: \`burst\` points per window of \`burst / rate\` seconds (on average \`rate\` per second; \`burst\` a whole multiple of \`rate\`); points: ${POINTS_IN_WORDS} (every route: docs/operations.md) — the cost class is declared with each route and read from the route matched; a path no route serves costs nothing and is a 404 (see *Operations*); a response-cache hit costs what a miss does; \`off\` turns it off`,
    readBy: ['gateway'],
  },
  rateLimitStore: {
    env: 'RATE_LIMIT_STORE',
    parse: parseStoreUrl,
    meaning:
      '`redis://host:6379` (or `rediss://`): Redis or Valkey holding the budgets, so that gateways on several machines give a client one budget. Unset: the budget is kept by the gateway (one across its workers). While the store cannot be reached, each gateway keeps budgets itself; no request fails for it',
    readBy: ['gateway'],
  },
  trustedProxies: {
    env: 'TRUSTED_PROXIES',
    default: '',
    parse: (raw) => Object.freeze(parseTrustedProxies(raw)),
    meaning:
      "addresses and CIDR blocks (`10.0.0.0/8,::1`) of proxies in front of the gateway: only from these peers are `X-Forwarded-For` / `Forwarded` read for the client's address",
    readBy: ['gateway'],
  },
  apiKeys: {
    env: 'API_KEYS',
    default: '',
    parse: (raw) => Object.freeze(apiKeys(raw)),
    meaning:
      'comma-separated keys (16–200 printable characters): a request sending one in `X-Api-Key` is budgeted as that key instead of its address (an unknown key is ignored)',
    readBy: ['gateway'],
  },
  maxConnectionsPerClient: {
    env: 'MAX_CONNECTIONS_PER_CLIENT',
    default: DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
    // Counted before any HTTP parsing: src/http/connection-cap.ts.
    parse: orOff(int(1, 100_000)),
    meaning:
      'connections one client address (IPv6: its /64) may hold open at once; one more is reset as soon as it is accepted, before any HTTP parsing — a script opening a connection per request, many at once, costs the gateway little more than the accepts. Per gateway process (each cluster worker counts its own); `TRUSTED_PROXIES` are exempt, loopback is not (list a local proxy in `TRUSTED_PROXIES`); `off` = no cap. Refusals: `<prefix>_connections_refused_total` on `/metrics`',
    readBy: ['gateway'],
  },
  exportConcurrency: {
    env: 'EXPORT_CONCURRENCY',
    default: 4,
    parse: orOff(int(1, 10_000)),
    meaning:
      'downloads (`/v1/exports`, lists asked with `format=`) one client may have in flight in the whole gateway (with workers, the primary counts them); `off` = no limit',
    readBy: ['gateway'],
  },
  downloadMaxRows: {
    env: 'DOWNLOAD_MAX_ROWS',
    default: DEFAULT_DOWNLOAD_MAX_ROWS,
    parse: int(1, 10_000_000),
    meaning: 'rows a list asked as a file (`format=csv|ndjson`) holds at most; past it the file is cut and says so (`X-Truncated: true`)',
    readBy: ['gateway'],
  },
});
