/**
 * The pure parts of the object store client: what a source names and the URL an `s3://` key is
 * requested at; what is retried and how long it waits; the headers of a resumed read; and the
 * AWS_* settings as src/config/store.ts reads them.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { StoreError } from '../../src/store/errors.ts';
import { isStoreUrl, parseSource, requestUrl, resolveStoreUrl, s3Parts } from '../../src/store/location.ts';
import { parseContentRange, preconditionHeaders, rangeHeader, readHeaders } from '../../src/store/ranges.ts';
import { isTransientError, isTransientStatus, parseRetryAfter, retryDelayMs } from '../../src/store/retry.ts';

describe('sources', () => {
  it.each([
    ['s3://bucket/registry', 's3://bucket/registry/'],
    ['s3://bucket', 's3://bucket/'],
    ['s3://my.bucket-1/a/b//', 's3://my.bucket-1/a/b/'],
    ['https://pub-abc.r2.dev/registry', 'https://pub-abc.r2.dev/registry/'],
    ['HTTP://Example.org:8080/x/latest/', 'http://example.org:8080/x/latest/'],
  ])('%s is the store folder %s', (source, url) => {
    expect(isStoreUrl(source)).toBe(true);
    expect(parseSource(source, '/cwd')).toEqual({ kind: 'store', url });
  });

  it('takes anything else for a directory, relative to the caller', () => {
    expect(parseSource('bundles/a', '/home/me')).toEqual({ kind: 'dir', path: '/home/me/bundles/a' });
    expect(parseSource('/srv/bundle', '/home/me')).toEqual({ kind: 'dir', path: '/srv/bundle' });
  });

  it.each([
    ['https://user:secret@host/x', /must not carry a user or password/],
    ['s3://Upper_Case/x', /not a valid bucket name/],
    ['s3://b/x', /not a valid bucket name/],
    ['https://host/x?sig=1', /takes no query/],
    ['gs://bucket/x', /unsupported source/],
    ['ftp://host/x', /unsupported source/],
  ])('refuses %s', (source, message) => {
    expect(() => parseSource(source, '/')).toThrow(StoreError);
    expect(() => parseSource(source, '/')).toThrow(message);
    expect(() => parseSource(source, '/')).not.toThrow(/secret/);
  });

  it('resolves names and the pointer path against a folder, in s3:// as in https://', () => {
    expect(resolveStoreUrl('s3://b1/registry/latest/', '../bundles/')).toBe('s3://b1/registry/bundles/');
    expect(resolveStoreUrl('s3://b1/latest/', '../bundles/abc/')).toBe('s3://b1/bundles/abc/');
    expect(resolveStoreUrl('https://h/r/latest/', '../bundles/abc/')).toBe('https://h/r/bundles/abc/');
    expect(resolveStoreUrl('s3://b1/r/', encodeURIComponent('a b#c.jsonl'))).toBe('s3://b1/r/a%20b%23c.jsonl');
    expect(s3Parts('s3://b1/r/a%20b.jsonl')).toEqual({ bucket: 'b1', key: 'r/a b.jsonl' });
  });

  it('requests s3:// path-style under an endpoint, virtual-hosted on AWS', () => {
    const url = 's3://bucket/registry/manifest.json';
    expect(requestUrl(url, { endpoint: 'https://acct.r2.cloudflarestorage.com' })).toBe('https://acct.r2.cloudflarestorage.com/bucket/registry/manifest.json');
    expect(requestUrl(url, { endpoint: 'http://127.0.0.1:9000/' })).toBe('http://127.0.0.1:9000/bucket/registry/manifest.json');
    expect(requestUrl(url, { region: 'eu-west-1' })).toBe('https://bucket.s3.eu-west-1.amazonaws.com/registry/manifest.json');
    expect(requestUrl(url, {})).toBe('https://bucket.s3.amazonaws.com/registry/manifest.json');
    expect(requestUrl('s3://my.bucket/k', { region: 'eu-west-1' })).toBe('https://s3.eu-west-1.amazonaws.com/my.bucket/k');
    expect(requestUrl('https://h/p/x.json', { endpoint: 'http://ignored' })).toBe('https://h/p/x.json');
  });
});

describe('retrying', () => {
  it.each([
    [408, true], [429, true], [500, true], [502, true], [503, true], [504, true], [599, true],
    [501, false], [505, false], [400, false], [403, false], [404, false], [412, false], [416, false],
  ])('status %i is transient: %s', (status, transient) => {
    expect(isTransientStatus(status)).toBe(transient);
  });

  it('retries socket faults and stalls (also wrapped in a cause), not a name that does not resolve or a TLS failure', () => {
    const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });
    for (const code of ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'UND_ERR_SOCKET']) expect(isTransientError(coded(code)), code).toBe(true);
    expect(isTransientError(new Error('socket hang up'))).toBe(true);
    expect(isTransientError(new TypeError('fetch failed', { cause: coded('ECONNRESET') }))).toBe(true);
    for (const code of ['ENOTFOUND', 'CERT_HAS_EXPIRED', 'ERR_TLS_CERT_ALTNAME_INVALID']) expect(isTransientError(coded(code)), code).toBe(false);
    expect(isTransientError(new Error('anything else'))).toBe(false);
    expect(isTransientError(undefined)).toBe(false);
  });

  it('reads Retry-After as seconds or a date', () => {
    const now = Date.parse('2026-07-01T10:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('Wed, 01 Jul 2026 10:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Wed, 01 Jul 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('waits exponentially longer with jitter, never past the cap, Retry-After honoured up to it', () => {
    const backoff = { baseMs: 100, maxMs: 1000 };
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, backoff, () => 0))).toEqual([50, 100, 200, 400, 500]);
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, backoff, () => 1))).toEqual([100, 200, 400, 800, 1000]);
    expect(retryDelayMs(1, backoff, () => 0.5, 700)).toBe(700);
    expect(retryDelayMs(1, backoff, () => 0.5, 60_000)).toBe(1000);
  });
});

describe('resumed reads', () => {
  it('asks for the rest of the object, or up to the end asked', () => {
    expect(rangeHeader(1024)).toBe('bytes=1024-');
    expect(rangeHeader(10, 99)).toBe('bytes=10-99');
  });

  it('makes a changed object a refusal: If-Match with a strong ETag, else If-Unmodified-Since', () => {
    expect(preconditionHeaders({ etag: '"abc"', lastModified: 'Wed, 01 Jul 2026 10:00:00 GMT' })).toEqual({ 'If-Match': '"abc"' });
    expect(preconditionHeaders({ etag: 'W/"abc"', lastModified: 'Wed, 01 Jul 2026 10:00:00 GMT' })).toEqual({ 'If-Unmodified-Since': 'Wed, 01 Jul 2026 10:00:00 GMT' });
    expect(preconditionHeaders(undefined)).toEqual({});
  });

  it('sends a Range only from a byte past the first, or with an end, and only to a server that has ranges', () => {
    expect(readHeaders(0, undefined, undefined, true)).toEqual({});
    expect(readHeaders(500, undefined, { etag: '"e"' }, true)).toEqual({ 'If-Match': '"e"', Range: 'bytes=500-' });
    expect(readHeaders(0, 99, undefined, true)).toEqual({ Range: 'bytes=0-99' });
    expect(readHeaders(500, undefined, { etag: '"e"' }, false)).toEqual({ 'If-Match': '"e"' });
  });

  it('reads Content-Range', () => {
    expect(parseContentRange('bytes 10-99/1000')).toEqual({ start: 10, end: 99, size: 1000 });
    expect(parseContentRange('bytes 10-99/*')).toEqual({ start: 10, end: 99, size: undefined });
    expect(parseContentRange('bytes 99-10/1000')).toBeUndefined();
    expect(parseContentRange('items 1-2/3')).toBeUndefined();
    expect(parseContentRange(undefined)).toBeUndefined();
  });
});

describe('AWS_* settings', () => {
  it('reads a key, the region and the endpoint under the SDKs names', () => {
    const { store } = loadConfig({
      AWS_ACCESS_KEY_ID: 'AKID',
      AWS_SECRET_ACCESS_KEY: 'SECRET',
      AWS_SESSION_TOKEN: 'TOKEN',
      AWS_DEFAULT_REGION: 'auto',
      AWS_ENDPOINT_URL: 'https://acct.r2.cloudflarestorage.com/',
    });
    expect(store).toEqual({
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'SECRET', sessionToken: 'TOKEN' },
      region: 'auto',
      endpoint: 'https://acct.r2.cloudflarestorage.com',
      timeoutMs: 30_000,
      attempts: 6,
    });
    expect(Object.isFrozen(store)).toBe(true);
  });

  it('prefers AWS_REGION and AWS_ENDPOINT_URL_S3, and needs neither', () => {
    const env = { AWS_REGION: 'eu-west-1', AWS_DEFAULT_REGION: 'us-east-1', AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9000', AWS_ENDPOINT_URL: 'http://other' };
    expect(loadConfig(env).store).toMatchObject({ region: 'eu-west-1', endpoint: 'http://127.0.0.1:9000' });
    expect(loadConfig({}).store).toMatchObject({ credentials: undefined, region: undefined, endpoint: undefined });
  });

  it.each([
    [{ AWS_ACCESS_KEY_ID: 'AKID' }, /^AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together$/],
    [{ AWS_SECRET_ACCESS_KEY: 'SECRET' }, /^AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together$/],
    [{ AWS_SESSION_TOKEN: 'TOKEN' }, /^AWS_SESSION_TOKEN needs/],
    [{ AWS_REGION: 'EU West' }, /^AWS_REGION must be a region name/],
    [{ AWS_ENDPOINT_URL_S3: 'acct.r2.cloudflarestorage.com' }, /^AWS_ENDPOINT_URL_S3 must be an http\(s\) URL/],
    [{ AWS_ENDPOINT_URL: 'https://key:secret@host' }, /^AWS_ENDPOINT_URL must be an http\(s\) URL/],
    [{ STORE_ATTEMPTS: '0' }, /^STORE_ATTEMPTS must be an integer from 1 to 100/],
    [{ STORE_TIMEOUT_MS: 'soon' }, /^STORE_TIMEOUT_MS must be an integer/],
  ])('refuses %j naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
    expect(() => loadConfig(env)).not.toThrow(/secret/);
  });
});
