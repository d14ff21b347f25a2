/**
 * Who a request comes from, for per-client budgets (./decide.ts). Pure: the peer
 * address, the forwarding headers and the API key header in, a client key out.
 *
 * - The client is the connection's peer address. `X-Forwarded-For` and `Forwarded` are read
 *   only when that peer is a trusted proxy (`TRUSTED_PROXIES`): from anyone else they are text
 *   the client wrote, and a client rotating them would get a fresh budget per request. Walking
 *   the forwarded chain from the right, every trusted hop is skipped; the first untrusted
 *   address is the client (the left part of the chain is the client's own claim).
 * - IPv6 clients are keyed by their /64: one host usually holds a whole /64 and can rotate
 *   addresses within it at will.
 * - A configured API key (`API_KEYS`, sent as `X-Api-Key`) is the identity instead, so people
 *   behind one address (an office, a NAT) can each have their own budget. An unknown key is
 *   ignored: inventing keys buys nothing. Keys are never kept in clear (a hash prefix names them).
 *
 * Deliberately not here: authentication (a key grants no other right).
 */
import { hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

export interface ClientIdentity {
  /** The budget key: `ip:<address>`, `ip6:<prefix>::/64` or `key:<hash prefix>`. */
  key: string;
  /** The client's address (after trusted forwarding). */
  address: string;
  /** The client's address is loopback (monitoring on the same host). */
  loopback: boolean;
}

export interface IdentityRules {
  /** Whether an address is a trusted proxy. */
  trusted(address: string): boolean;
  /** Whether a key sent in `X-Api-Key` is one of `API_KEYS`. */
  knownKey(key: string): boolean;
}

export interface RequestFacts {
  /** The socket's remote address as Node reports it (`::ffff:` prefix possible). */
  peer: string | undefined;
  forwardedFor?: string | undefined;
  forwarded?: string | undefined;
  apiKey?: string | undefined;
}

/** `::ffff:127.0.0.2` → `127.0.0.2`; brackets and ports of `Forwarded` values removed. */
export function normalizeAddress(raw: string): string | undefined {
  let text = raw.trim().replace(/^"|"$/g, '');
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) text = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(text)) text = text.slice(0, text.lastIndexOf(':'));
  text = text.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  return isIP(text) ? text.toLowerCase() : undefined;
}

/** The addresses of `X-Forwarded-For: a, b` or `Forwarded: for=a;proto=https, for="[b]:1"`, left to right; undefined entries are unreadable. */
export function forwardedChain(forwardedFor: string | undefined, forwarded: string | undefined): (string | undefined)[] {
  if (forwarded) {
    return forwarded.split(',').map((element) => {
      const pair = element.split(';').find((p) => /^\s*for\s*=/i.test(p));
      return pair ? normalizeAddress(pair.slice(pair.indexOf('=') + 1)) : undefined;
    });
  }
  return forwardedFor ? forwardedFor.split(',').map(normalizeAddress) : [];
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

export function isLoopback(address: string): boolean {
  return LOOPBACK.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

/** The /64 of an IPv6 address, as a key. */
function ipv6Prefix(address: string): string {
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `ip6:${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/** The client a request counts against. */
export function clientIdentity(request: RequestFacts, rules: IdentityRules): ClientIdentity {
  let address = normalizeAddress(request.peer ?? '') ?? 'unknown';
  if (address !== 'unknown' && rules.trusted(address)) {
    const chain = forwardedChain(request.forwardedFor, request.forwarded);
    for (let i = chain.length - 1; i >= 0; i -= 1) {
      const hop = chain[i];
      // An unreadable hop ends the walk: what lies left of it cannot be trusted to mean anything.
      if (hop === undefined) break;
      address = hop;
      if (!rules.trusted(hop)) break;
    }
  }
  const loopback = address !== 'unknown' && isLoopback(address);
  const apiKey = request.apiKey?.trim();
  if (apiKey && rules.knownKey(apiKey)) return { key: `key:${hash('sha256', apiKey, 'hex').slice(0, 16)}`, address, loopback };
  return { key: isIP(address) === 6 ? ipv6Prefix(address) : `ip:${address}`, address, loopback };
}

/** Each request's client, worked out once (the refusals before Koa, the rate limit and the stream routes all ask). */
const identified = new WeakMap<IncomingMessage, ClientIdentity>();

/** The client of a request, from its socket's peer and its headers (see the header). */
export function clientOf(req: IncomingMessage, rules: IdentityRules): ClientIdentity {
  let client = identified.get(req);
  if (!client) {
    const header = (name: string) => {
      const value = req.headers[name];
      return (Array.isArray(value) ? value.join(', ') : value) || undefined;
    };
    client = clientIdentity({ peer: req.socket.remoteAddress, forwardedFor: header('x-forwarded-for'), forwarded: header('forwarded'), apiKey: header('x-api-key') }, rules);
    identified.set(req, client);
  }
  return client;
}

/** The rules of a configuration: `TRUSTED_PROXIES` as a block list, `API_KEYS` as a set. */
export function identityRules(trustedProxies: readonly string[], apiKeys: readonly string[]): IdentityRules {
  const proxies = new BlockList();
  for (const entry of trustedProxies) {
    const [address, bits] = entry.split('/') as [string, string | undefined];
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) proxies.addAddress(address, family);
    else proxies.addSubnet(address, Number(bits), family);
  }
  const keys = new Set(apiKeys);
  return {
    trusted: (address) => trustedProxies.length > 0 && proxies.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4'),
    knownKey: (key) => keys.has(key),
  };
}
