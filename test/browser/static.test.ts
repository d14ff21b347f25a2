/**
 * How the gateway serves the two pages (HTTP only, no browser, no Elasticsearch needed):
 * `/` answers API clients exactly as before and redirects only browsers asking for HTML;
 * index pages revalidate, hashed assets are cached for a year, gzip where accepted; nothing
 * outside the built files can be reached.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Gateway } from '../../src/compose.ts';
import { WEB_DIST } from '../../src/http/static.ts';
import { composed } from '../../harness/composed.ts';

// The run's Elasticsearch with a prefix nothing was loaded under: no live generation, and the
// pages do not need one.
const gateway = await composed({ RATE_LIMIT: 'off', INDEX_PREFIX: 'static-pages', REGISTRY_NAME: 'test-registry' }, inject('esUrl'));

let server: ReturnType<Gateway['app']['listen']>;
let base: string;
const get = (p: string, headers: Record<string, string> = {}) => fetch(`${base}${p}`, { headers, redirect: 'manual' });
const assetsOf = (page: string) => readdirSync(path.join(WEB_DIST, page, 'assets'));

beforeAll(async () => {
  server = gateway.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await gateway.release();
});

describe('/ for API clients and browsers', () => {
  it.each([['application/json'], ['*/*'], ['']])('answers the root JSON to Accept: %s', async (accept) => {
    const response = await get('/', accept ? { Accept: accept } : {});
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await response.json()) as any;
    expect(body.data.endpoints).toContain('/v1/health');
    expect(response.headers.get('vary')).toMatch(/Accept/);
  });

  it('redirects a browser asking for HTML to /explorer/', async () => {
    const response = await get('/', { Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/explorer/');
  });

  it('leaves /v1 alone whatever the Accept header', async () => {
    const response = await get('/v1/health', { Accept: 'text/html' });
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).data.status).toBe('ok');
  });
});

describe.each(['explorer', 'docs'])('/%s/', (page) => {
  it('serves index.html for revalidation, with a CSP naming only this origin', async () => {
    const response = await get(`/${page}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('content-security-policy')).toContain("default-src 'self'");
    const etag = response.headers.get('etag')!;
    const html = await response.text();
    for (const asset of assetsOf(page)) expect(html.includes(`/${page}/assets/${asset}`) || asset.endsWith('.map')).toBe(true);
    expect(html).not.toMatch(/https?:\/\//);
    const again = await get(`/${page}/`, { 'If-None-Match': etag });
    expect(again.status).toBe(304);
  });

  it('redirects the path without its slash', async () => {
    const response = await get(`/${page}`);
    expect(response.status).toBe(301);
    expect(response.headers.get('location')).toBe(`/${page}/`);
  });

  it('caches hashed assets for a year and gzips them for clients that accept it', async () => {
    const script = assetsOf(page).find((name) => name.endsWith('.js'))!;
    expect(script).toMatch(/-[A-Za-z0-9_-]{8}\.js$/);
    const plain = await get(`/${page}/assets/${script}`, { 'Accept-Encoding': 'identity' });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(plain.headers.get('content-encoding')).toBeNull();
    const bytes = (await plain.arrayBuffer()).byteLength;
    const gzip = await get(`/${page}/assets/${script}`, { 'Accept-Encoding': 'gzip' });
    expect(gzip.headers.get('content-encoding')).toBe('gzip');
    expect(Number(gzip.headers.get('content-length'))).toBeLessThan(bytes);
  });

  it.each(['/assets/nope.js', '/assets/..%2Fpackage.json', '/assets', '/other.html', '/assets/a/b.js'])('answers 404 in the API error shape for %s', async (rest) => {
    const response = await get(`/${page}${rest}`);
    expect(response.status).toBe(404);
    expect(((await response.json()) as any).error.code).toBe('not_found');
  });
});
