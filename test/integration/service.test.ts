/**
 * Service routes and cross-cutting HTTP behaviour over a real Elasticsearch: health, the root
 * document, readiness, metrics (gauges counted here from the bundle files), CORS, ETag/304,
 * HEAD, gzip and the 404 body.
 */
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleRow, readAllRows, readJson } from '../../generator/read-bundle.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import {
  type Bundle, CURRENT_ENTITY, CURRENT_RELATION, cycleOf, expectError, expectedCurrent, expectedEntities, inScope, lastWins, readBundle,
  relationKey,
} from '../support/expect.ts';

const PREFIX = 'blackrelay_api';

let gw: TestGateway;
let b: Bundle;

beforeAll(async () => {
  // At its defaults: the reference explorer parses `blackrelay_api_<key> <n>`, the registry name's prefix.
  gw = await startTestGateway({ name: 'service-spec', scale: 2, seed: 11 });
  b = await readBundle(gw.bundleDir);
}, 300_000);

afterAll(() => gw?.close());

/** A raw GET (no automatic decompression), for checking the bytes on the wire. */
function rawGet(path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, any>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${gw.url}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('service routes', () => {
  it('answers /v1/health with ok and the time, never cached', async () => {
    const { status, body, headers } = await gw.get('/v1/health');
    expect(status).toBe(200);
    expect(body.data.status).toBe('ok');
    expect(Math.abs(Date.parse(body.data.time) - Date.now())).toBeLessThan(60_000);
    expect(headers.get('cache-control')).toBe('no-store');
  });

  it('advertises every route family at /v1, with {param} and never :param', async () => {
    const { status, body } = await gw.get('/v1');
    expect(status).toBe(200);
    const endpoints: string[] = body.data.endpoints;
    const typed = ['systems', 'characters', 'tribes', 'assemblies', 'gates', 'regions', 'constellations', 'items', 'materials', 'enemies', 'recipes', 'blueprints', 'ships', 'structures'];
    const expected = [
      '/v1/health', '/v1/ready', '/v1/metrics',
      '/v1/search', '/v1/entities', '/v1/entities/{idOrSlug}',
      ...['facts', 'relations', 'sources', 'history'].map((s) => `/v1/entities/{idOrSlug}/${s}`),
      ...[...Object.keys(CURRENT_ENTITY), ...Object.keys(CURRENT_RELATION)].map((c) => `/v1/current/${c}`),
      ...typed.flatMap((c) => [`/v1/${c}`, `/v1/${c}/{idOrSlug}`]),
      '/v1/events', '/v1/events/{id}', '/v1/killmails', '/v1/killmails/{id}', '/v1/killmails/{id}/raw',
      '/v1/sources', '/v1/sources/{id}', '/v1/artefacts/{id}',
      '/v1/ops/freshness', '/v1/ops/cursors', '/v1/ops/chain-coverage', '/v1/ops/source-gaps', '/v1/exports/{file}',
    ];
    for (const route of expected) expect(endpoints, route).toContain(route);
    expect(endpoints.filter((e) => /:\w/.test(e.replace(/^https?:/, '')))).toEqual([]);
    expect(new Set(endpoints).size).toBe(endpoints.length);
    expect(body.data).toMatchObject({ version: 'v1', defaultEnvironment: 'stillness', currentCycle: b.currentCycle });
  });

  it('advertises /metrics like the reference root document', async () => {
    // The reference's root lists `/metrics` among its 73 routes (api-behaviour.md 1.1).
    expect((await gw.get('/v1')).body.data.endpoints).toContain('/metrics');
  });

  it('answers the root document at / too', async () => {
    const [v1, root] = [await gw.get('/v1'), await gw.get('/')];
    expect(root.status).toBe(200);
    expect(root.body).toEqual(v1.body);
  });

  it('is ready with the live generation and the manifest generatedAt, verbatim', async () => {
    const { status, body } = await gw.get('/v1/ready');
    expect(status).toBe(200);
    expect(body.data.status).toBe('ready');
    expect(body.data.generation).toBe(gw.load.generation);
    expect(body.data.generation).toEqual(expect.any(String));
    expect(body.data.cluster).toMatch(/^(green|yellow)$/);
    expect(body.data.generatedAt).toBe(b.manifest.generatedAt);
  });
});

describe('metrics', () => {
  /** Gauges as the reference explorer reads them: unlabelled, `^blackrelay_api_([a-z_]+)\s+(\d+(\.\d+)?)$`. */
  const gauges = (text: string) => new Map([...text.matchAll(/^blackrelay_api_([a-z_]+)\s+(\d+(?:\.\d+)?)$/gm)].map((m) => [m[1]!, Number(m[2])]));
  const STARTS: [number, number][] = [[5, Date.parse('2026-03-11T09:00:00Z')], [6, Date.parse('2026-06-25T09:00:00Z')]];
  /** The cycle of an instant with the default CYCLE_STARTS; earlier instants are uncycled. */
  const cycleAt = (at: string) => STARTS.filter(([, start]) => Date.parse(at) >= start).map(([c]) => c).pop();

  it('serves text with build_info 1 at /metrics and /v1/metrics', async () => {
    for (const path of ['/metrics', '/v1/metrics']) {
      const { status, headers, text } = await gw.get(path);
      expect(status).toBe(200);
      expect(headers.get('content-type')).toMatch(/^text\/plain/);
      expect(text).toMatch(new RegExp(`^${PREFIX}_build_info 1$`, 'm'));
    }
  });

  it('labels request durations by route pattern, never by the raw URL', async () => {
    const id = b.entities.find((r) => r.entityType === 'system')!.id;
    expect((await gw.get(`/v1/systems/${encodeURIComponent(id)}`)).status).toBe(200);
    const { text } = await gw.get('/metrics');
    expect(text).toMatch(new RegExp(`^${PREFIX}_http_request_duration_seconds_count\\{[^}]*route="/v1/systems/:idOrSlug"[^}]*status="200"`, 'm'));
    expect(text).not.toContain(id);
  });

  /** The key each row file's rows are identified by (export format, section 5): duplicates are the same row. */
  const ROW_KEYS: [gauge: string, file: string, key: (r: BundleRow) => string][] = [
    ['entities', 'entities.jsonl', (r) => r.id],
    ['sources', 'sources.jsonl', (r) => r.id],
    ['events', 'events.jsonl', (r) => r.id],
    ['killmails', 'killmails.jsonl', (r) => r.id],
    ['facts', 'facts.jsonl', (r) => `${r.entityId}:${r.key}:${r.sourceId}`],
    ['relations', 'relations.jsonl', relationKey],
    ['entity_sources', 'entity_sources.jsonl', (r) => `${r.entityId}:${(r.source ?? r).id}`],
    ['artefacts', 'source_artefacts.jsonl', (r) => r.id],
    ['chain_objects', 'chain_objects.jsonl', (r) => r.id],
  ];

  it('counts the rows indexed from each file: its rowCount less repeated ids, every environment and cycle', async () => {
    const g = gauges((await gw.get('/metrics')).text);
    let repeated = 0;
    for (const [gauge, file, key] of ROW_KEYS) {
      const rows = await readAllRows(b.dir, file);
      const distinct = lastWins(rows, key).length;
      expect(rows.length, file).toBe(b.manifest.files.find((f: { path: string }) => f.path === file).rowCount);
      repeated += rows.length - distinct;
      expect(g.get(gauge), gauge).toBe(distinct);
    }
    // The bundle repeats ids, so "less repeated ids" is really checked.
    expect(repeated).toBeGreaterThan(0);
    // Every environment: the whole file, not the default environment's share.
    expect(g.get('entities')).toBeGreaterThan(expectedEntities(b, 'all').length);
    const gaps = (await readJson(b.dir, 'ops_source_gaps.json')).data as BundleRow[];
    expect(g.get('source_gaps')).toBe(gaps.length);
  });

  it('counts every current collection over the whole current file, zero included', async () => {
    const g = gauges((await gw.get('/metrics')).text);
    for (const [collection, { type }] of Object.entries(CURRENT_ENTITY)) {
      const key = `current_${collection}`;
      expect(g.get(key), key).toBe(b.currentEntities.filter((r) => r.entity.entityType === type).length);
    }
    for (const [collection, predicates] of Object.entries(CURRENT_RELATION)) {
      const key = `current_${collection.replace(/-/g, '_')}`;
      expect(g.get(key), key).toBe(b.currentRelations.filter((r) => predicates.includes(r.predicate)).length);
    }
    // Characters without chain evidence are rows of the file too (the default-scope gauge leaves them out).
    expect(g.get('current_characters')).toBeGreaterThan(g.get('default_scope_current_characters')!);
  });

  it('keeps the default-scope counts under default_scope_<key>: entities, facts, relations, sources, artefacts', async () => {
    const g = gauges((await gw.get('/metrics')).text);
    const still = (r: BundleRow) => r.environment === 'stillness';
    expect(g.get('default_scope_entities')).toBe(expectedEntities(b, 'default').length);
    const facts = lastWins(await readAllRows(b.dir, 'facts.jsonl'), (r) => `${r.entityId}:${r.key}:${r.sourceId}`);
    expect(g.get('default_scope_facts')).toBe(facts.filter(still).length);
    expect(g.get('default_scope_relations')).toBe(lastWins(await readAllRows(b.dir, 'relations.jsonl'), relationKey).filter(still).length);
    expect(g.get('default_scope_sources')).toBe(lastWins(await readAllRows(b.dir, 'sources.jsonl'), (r) => r.id).filter(still).length);
    expect(g.get('default_scope_artefacts')).toBe(lastWins(await readAllRows(b.dir, 'source_artefacts.jsonl'), (r) => r.id).filter(still).length);
    const gaps = (await readJson(b.dir, 'ops_source_gaps.json')).data as BundleRow[];
    expect(g.get('default_scope_source_gaps')).toBe(gaps.filter(still).length);
  });

  it('keeps default-scope killmails and events, with cycles derived from occurredAt where the row has none', async () => {
    const g = gauges((await gw.get('/metrics')).text);
    const scoped = (rows: BundleRow[], cycle: (r: BundleRow) => number | undefined) =>
      lastWins(rows, (r) => r.id).filter((r) => r.environment === 'stillness' && inScope(cycle(r), 'default', b.currentCycle)).length;
    expect(g.get('default_scope_killmails')).toBe(scoped(await readAllRows(b.dir, 'killmails.jsonl'), (r) => cycleAt(r.occurredAt)));
    expect(g.get('default_scope_events')).toBe(scoped(await readAllRows(b.dir, 'events.jsonl'), (r) => cycleOf(r.cycle) ?? cycleAt(r.occurredAt)));
  });

  it('keeps default-scope current collections as their routes list them (fallback included)', async () => {
    const g = gauges((await gw.get('/metrics')).text);
    for (const collection of [...Object.keys(CURRENT_ENTITY), ...Object.keys(CURRENT_RELATION)]) {
      const key = `default_scope_current_${collection.replace(/-/g, '_')}`;
      expect(g.get(key), key).toBe(expectedCurrent(b, collection, 'default').rows.length);
    }
  });

  it("gives the reference explorer every key it reads, unlabelled", async () => {
    const g = gauges((await gw.get('/v1/metrics')).text);
    const read = ['entities', 'events', 'killmails', 'facts', 'relations', 'sources', 'current_characters', 'current_tribes', 'current_systems',
      'current_regions', 'current_constellations', 'current_assemblies', 'current_gates', 'current_items', 'current_materials', 'current_enemies'];
    for (const key of read) expect(g.get(key), key).toEqual(expect.any(Number));
  });
});

describe('HTTP behaviour', () => {
  it('echoes an http(s) Origin with Vary: Origin, else answers *', async () => {
    const echoed = await gw.get('/v1/entities?limit=1', { headers: { Origin: 'https://explorer.example' } });
    expect(echoed.headers.get('access-control-allow-origin')).toBe('https://explorer.example');
    expect(echoed.headers.get('vary')).toMatch(/\bOrigin\b/);
    expect((await gw.get('/v1/entities?limit=1')).headers.get('access-control-allow-origin')).toBe('*');
    expect((await gw.get('/v1/health', { headers: { Origin: 'null' } })).headers.get('access-control-allow-origin')).toBe('*');
    const error = await gw.get('/v1/nowhere', { headers: { Origin: 'http://localhost:4321' } });
    expect(error.headers.get('access-control-allow-origin')).toBe('http://localhost:4321');
  });

  it('answers OPTIONS with a 204 preflight and exposes ETag, Retry-After, Content-Encoding', async () => {
    const res = await fetch(`${gw.url}/v1/entities`, { method: 'OPTIONS', headers: { Origin: 'https://explorer.example', 'Access-Control-Request-Method': 'GET' } });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-methods')).toMatch(/GET/);
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').split(/,\s*/).map((h) => h.toLowerCase());
    for (const h of ['etag', 'retry-after', 'content-encoding']) expect(exposed).toContain(h);
  });

  it('tags JSON reads with an ETag and answers a matching If-None-Match with 304', async () => {
    const first = await gw.get('/v1/entities?limit=5');
    const etag = first.headers.get('etag');
    expect(etag).toBeTruthy();
    expect(first.headers.get('cache-control')).toMatch(/public/);
    const again = await gw.get('/v1/entities?limit=5', { headers: { 'If-None-Match': etag! } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect((await gw.get('/v1/entities?limit=5', { headers: { 'If-None-Match': '"other"' } })).status).toBe(200);
    expect((await gw.get('/v1/entities?limit=6')).headers.get('etag')).not.toBe(etag);
  });

  it('answers HEAD with the GET status and headers, without a body', async () => {
    for (const path of ['/v1/entities?limit=3', '/v1/ready', '/v1/nowhere']) {
      const get = await gw.get(path, { headers: { 'Accept-Encoding': 'identity' } });
      const head = await gw.get(path, { method: 'HEAD', headers: { 'Accept-Encoding': 'identity' } });
      expect(head.status, path).toBe(get.status);
      expect(head.text).toBe('');
      for (const h of ['content-type', 'etag', 'cache-control', 'access-control-allow-origin', 'content-length']) {
        expect(head.headers.get(h), `${path} ${h}`).toBe(get.headers.get(h));
      }
    }
  });

  it('gzips a large JSON answer when the client accepts gzip, and only then', async () => {
    const path = '/v1/entities?limit=200&cycles=all';
    const plain = await rawGet(path, { 'Accept-Encoding': 'identity' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.length).toBeGreaterThan(1024);
    const zipped = await rawGet(path, { 'Accept-Encoding': 'gzip' });
    expect(zipped.status).toBe(200);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toMatch(/Accept-Encoding/i);
    expect(zipped.body.length).toBeLessThan(plain.body.length);
    expect(JSON.parse(gunzipSync(zipped.body).toString('utf8'))).toEqual(JSON.parse(plain.body.toString('utf8')));
  });

  it('answers an unknown route with the one error body, JSON and no-store', async () => {
    for (const path of ['/v1/nowhere', '/nowhere', '/v1/current/nowhere', '/v1/entities/x/nowhere']) {
      const res = await gw.get(path);
      expectError(res, 404, 'not_found');
      expect(res.body).toEqual({ error: { code: 'not_found', message: 'Route not found.' }, meta: { registry: gw.config.registryName, apiVersion: 'v1' } });
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
  });
});
