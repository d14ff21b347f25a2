/** Service routes and cross-cutting HTTP behaviour: root, health, ready, metrics, CORS, caching, compression. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleRow, readAllRows, readManifest } from '../../generator/read-bundle.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { inScope } from '../support/pages.ts';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({ name: 'service', scale: 1, seed: 13, env: { METRICS_PREFIX: 'blackrelay_api' } });
}, 300_000);

afterAll(() => gw?.close());

describe('service routes', () => {
  it('answers health without touching the index', async () => {
    const { status, body, headers } = await gw.get('/v1/health');
    expect(status).toBe(200);
    expect(body.data.status).toBe('ok');
    expect(headers.get('cache-control')).toBe('no-store');
  });

  it('lists every route family in the root document, at /v1 and /', async () => {
    const { body } = await gw.get('/v1');
    const endpoints: string[] = body.data.endpoints;
    for (const route of [
      '/v1/search', '/v1/entities/{idOrSlug}/history', '/v1/enemies/{idOrSlug}', '/v1/current/route-edges', '/v1/events/{id}',
      '/v1/killmails/{id}/raw', '/v1/sources', '/v1/artefacts/{id}', '/v1/ops/chain-coverage', '/v1/ops/source-gaps', '/v1/exports/{file}',
    ]) expect(endpoints).toContain(route);
    expect(endpoints.some((e) => e.includes(':'))).toBe(false);
    expect(body.data.currentCycle).toBe(Math.max(...(await readManifest(gw.bundleDir)).cycles));
    expect((await gw.get('/')).body.data).toEqual(body.data);
  });

  it('is ready with the live generation and its manifest', async () => {
    const { status, body } = await gw.get('/v1/ready');
    expect(status).toBe(200);
    expect(body.data).toMatchObject({ status: 'ready', generation: gw.load.generation, cluster: expect.stringMatching(/green|yellow/) });
    const generatedAt = (await readManifest(gw.bundleDir)).generatedAt;
    expect(Date.parse(body.data.generatedAt)).toBe(Date.parse(generatedAt));
  });

  it('exposes the reference explorer gauges, counted in the default scope', async () => {
    const { text, headers } = await gw.get('/metrics');
    expect(headers.get('content-type')).toMatch(/text\/plain/);
    const gauges = new Map([...text.matchAll(/^blackrelay_api_([a-z_]+)\s+(\d+(?:\.\d+)?)$/gm)].map((m) => [m[1], Number(m[2])]));
    expect(gauges.get('build_info')).toBe(1);
    const current = Math.max(...(await readManifest(gw.bundleDir)).cycles);
    const entities = [...new Map((await readAllRows(gw.bundleDir, 'entities.jsonl')).map((r) => [r.id, r])).values()];
    const cycle = (r: BundleRow) => (Number.isInteger(r.cycle) && r.cycle >= 1 ? r.cycle : undefined);
    expect(gauges.get('entities')).toBe(entities.filter((r) => r.environment === 'stillness' && inScope(cycle(r), 'default', current)).length);
    for (const key of ['events', 'killmails', 'facts', 'relations', 'sources', 'current_characters', 'current_tribes', 'current_systems', 'current_enemies']) {
      expect(gauges.has(key), key).toBe(true);
    }
    expect(text).toMatch(/blackrelay_api_http_request_duration_seconds_bucket\{[^}]*route="\/v1\/health"/);
    expect((await gw.get('/v1/metrics')).status).toBe(200);
  });
});

describe('HTTP behaviour', () => {
  it('echoes an http(s) Origin with Vary, else *', async () => {
    const echoed = await gw.get('/v1/health', { headers: { Origin: 'https://explorer.example' } });
    expect(echoed.headers.get('access-control-allow-origin')).toBe('https://explorer.example');
    expect(echoed.headers.get('vary')).toMatch(/Origin/);
    expect(echoed.headers.get('access-control-expose-headers')).toMatch(/ETag.*Retry-After.*Content-Encoding/);
    expect((await gw.get('/v1/health')).headers.get('access-control-allow-origin')).toBe('*');
    expect((await gw.get('/v1/health', { headers: { Origin: 'file://x' } })).headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers OPTIONS anywhere with a 204 preflight, errors included CORS', async () => {
    const res = await fetch(`${gw.url}/v1/nowhere`, { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS');
    const missing = await gw.get('/v1/nowhere');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: { code: 'not_found', message: 'Route not found.' }, meta: { registry: gw.config.registryName, apiVersion: 'v1' } });
    expect(missing.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('caches JSON reads by generation: ETag, 304, the same headers on HEAD', async () => {
    const first = await gw.get('/v1/entities?limit=3');
    const etag = first.headers.get('etag')!;
    expect(etag).toBeTruthy();
    expect(first.headers.get('cache-control')).toMatch(/public, max-age=\d+/);
    expect((await gw.get('/v1/entities?limit=3', { headers: { 'If-None-Match': etag } })).status).toBe(304);
    expect((await gw.get('/v1/entities?limit=4')).headers.get('etag')).not.toBe(etag);
    const head = await gw.get('/v1/entities?limit=3', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('etag')).toBe(etag);
    expect(head.headers.get('cache-control')).toBe(first.headers.get('cache-control'));
  });

  it('compresses large JSON for clients that accept gzip', async () => {
    const res = await fetch(`${gw.url}/v1/entities?limit=200&cycles=all`, { headers: { 'Accept-Encoding': 'gzip' } });
    expect(res.headers.get('content-encoding')).toBe('gzip');
    expect(((await res.json()) as { data: unknown[] }).data.length).toBeGreaterThan(0);
  });
});
