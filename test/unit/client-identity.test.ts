/**
 * The client a request counts against: the socket's address unless the peer is a trusted proxy,
 * the right-most untrusted hop of the forwarded chain when it is, IPv6 by /64, and a configured
 * API key instead of the address.
 */
import { describe, expect, it } from 'vitest';
import { clientIdentity, forwardedChain, identityRules, normalizeAddress } from '../../src/limits/client-identity.ts';

const open = identityRules([], []);
const behindProxy = identityRules(['10.0.0.0/8', '::1'], []);

describe('client identity', () => {
  it('is the socket address, IPv4-mapped addresses unwrapped', () => {
    expect(clientIdentity({ peer: '::ffff:127.0.0.2' }, open)).toEqual({ key: 'ip:127.0.0.2', address: '127.0.0.2', loopback: true });
    expect(clientIdentity({ peer: '203.0.113.9' }, open)).toEqual({ key: 'ip:203.0.113.9', address: '203.0.113.9', loopback: false });
  });

  it('ignores forwarding headers from a peer that is not a trusted proxy', () => {
    const spoofed = { peer: '203.0.113.9', forwardedFor: '198.51.100.1', forwarded: 'for=198.51.100.2' };
    expect(clientIdentity(spoofed, open).key).toBe('ip:203.0.113.9');
    expect(clientIdentity(spoofed, behindProxy).key).toBe('ip:203.0.113.9');
  });

  it('takes the right-most untrusted hop from a trusted proxy', () => {
    // The client claims 1.1.1.1; the first proxy saw 198.51.100.7; 10.0.0.2 is a second proxy of ours.
    const request = { peer: '10.0.0.1', forwardedFor: '1.1.1.1, 198.51.100.7, 10.0.0.2' };
    expect(clientIdentity(request, behindProxy)).toEqual({ key: 'ip:198.51.100.7', address: '198.51.100.7', loopback: false });
    expect(clientIdentity({ peer: '10.0.0.1' }, behindProxy).key).toBe('ip:10.0.0.1');
    expect(clientIdentity({ peer: '10.0.0.1', forwardedFor: 'garbage, 198.51.100.7' }, behindProxy).key).toBe('ip:198.51.100.7');
    expect(clientIdentity({ peer: '10.0.0.1', forwardedFor: '198.51.100.7, garbage' }, behindProxy).key).toBe('ip:10.0.0.1');
  });

  it('reads RFC 7239 Forwarded (quoted, bracketed, with ports) before X-Forwarded-For', () => {
    expect(forwardedChain(undefined, 'for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8:cafe::17]:4711"')).toEqual(['192.0.2.60', '2001:db8:cafe::17']);
    expect(clientIdentity({ peer: '::1', forwarded: 'for="198.51.100.3:8080"', forwardedFor: '1.2.3.4' }, behindProxy).key).toBe('ip:198.51.100.3');
    expect(forwardedChain(undefined, 'for=unknown')).toEqual([undefined]);
  });

  it('keys IPv6 clients by their /64', () => {
    const a = clientIdentity({ peer: '2001:db8:1:2:aaaa::1' }, open);
    const b = clientIdentity({ peer: '2001:0db8:0001:0002:ffff:ffff:ffff:ffff' }, open);
    expect(a.key).toBe('ip6:2001:db8:1:2::/64');
    expect(b.key).toBe(a.key);
    expect(clientIdentity({ peer: '2001:db8::1' }, open).key).toBe('ip6:2001:db8:0:0::/64');
    expect(clientIdentity({ peer: '::1' }, open)).toMatchObject({ loopback: true });
  });

  it('uses a configured API key as the identity, never the key itself; unknown keys count as nothing', () => {
    const rules = identityRules([], ['k-0123456789abcdef']);
    const keyed = clientIdentity({ peer: '203.0.113.9', apiKey: 'k-0123456789abcdef' }, rules);
    expect(keyed.key).toMatch(/^key:[0-9a-f]{16}$/);
    expect(keyed.key).not.toContain('0123456789');
    expect(clientIdentity({ peer: '198.51.100.1', apiKey: 'k-0123456789abcdef' }, rules).key).toBe(keyed.key);
    expect(clientIdentity({ peer: '203.0.113.9', apiKey: 'invented-key-000000' }, rules).key).toBe('ip:203.0.113.9');
  });

  it('normalizes only what is an address', () => {
    expect(normalizeAddress(' 192.0.2.1:443 ')).toBe('192.0.2.1');
    expect(normalizeAddress('[::1]')).toBe('::1');
    expect(normalizeAddress('_hidden')).toBeUndefined();
    expect(normalizeAddress('')).toBeUndefined();
  });
});
