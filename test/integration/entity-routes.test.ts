/**
 * Entity routes against a real Elasticsearch: `/v1/entities`, `/v1/search`, the 14 typed
 * collections, details and provenance subroutes, and the edge's refusals. Expected rows are
 * computed here from entities.jsonl, facts.jsonl, relations.jsonl and entity_sources.jsonl.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleRow, readAllRows, readManifest } from '../../generator/read-bundle.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { type Scope, SCOPE_CASES, byteCompare, inScope, walk } from '../support/pages.ts';

const TYPED: Record<string, string> = {
  systems: 'system', characters: 'character', tribes: 'tribe', assemblies: 'assembly', gates: 'gate', regions: 'region',
  constellations: 'constellation', items: 'item', materials: 'material', enemies: 'enemy', recipes: 'recipe',
  blueprints: 'blueprint', ships: 'ship', structures: 'structure',
};

let gw: TestGateway;
let current: number;
let entities: BundleRow[];

const nonBlank = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v : undefined);
const label = (r: BundleRow) => (nonBlank(r.displayName) ?? nonBlank(r.name) ?? r.id).slice(0, 256).toLowerCase();
const cycleOf = (r: BundleRow) => (Number.isInteger(r.cycle) && r.cycle >= 1 ? r.cycle : undefined);

function expected(scope: Scope, where: (r: BundleRow) => boolean = () => true, environment = 'stillness'): string[] {
  return entities
    .filter((r) => r.environment === environment && inScope(cycleOf(r), scope, current) && where(r))
    .sort((a, b) => byteCompare(label(a), label(b)) || byteCompare(a.id, b.id))
    .map((r) => r.id);
}

beforeAll(async () => {
  gw = await startTestGateway({ name: 'entities', scale: 2, seed: 4 });
  current = Math.max(...(await readManifest(gw.bundleDir)).cycles);
  entities = [...new Map((await readAllRows(gw.bundleDir, 'entities.jsonl')).map((r) => [r.id, r])).values()];
}, 300_000);

afterAll(() => gw?.close());

describe('/v1/entities', () => {
  it.each([7, 200])('walks the default scope in label order at limit %i, every entity once', async (limit) => {
    const { rows } = await walk(gw, '/v1/entities', limit);
    expect(rows.map((r) => r.id)).toEqual(expected('default'));
  });

  it('holds names in other scripts and cases, so the walk above covers them', () => {
    const labels = entities.map(label);
    expect(labels.some((l) => /[\u3040-\u9fff]/u.test(l))).toBe(true);
    expect(labels.some((l) => /\p{Extended_Pictographic}/u.test(l))).toBe(true);
  });

  it.each(SCOPE_CASES)('scopes %s', async (query, scope) => {
    const { rows } = await walk(gw, `/v1/entities?${query}`, 200);
    expect(rows.map((r) => r.id)).toEqual(expected(scope));
  });

  it('lists another environment, and nothing for an unknown one', async () => {
    const other = entities.find((r) => r.environment !== 'stillness')!.environment;
    const { rows } = await walk(gw, `/v1/entities?cycles=all&environment=${other}`, 200);
    expect(rows.map((r) => r.id)).toEqual(expected('all', () => true, other));
    expect((await gw.get('/v1/entities?environment=nowhere')).body.data).toEqual([]);
  });

  it('filters by type (or entityType) and profile', async () => {
    const { rows } = await walk(gw, '/v1/entities?cycles=all&type=gate', 200);
    expect(rows.map((r) => r.id)).toEqual(expected('all', (r) => r.entityType === 'gate'));
    const same = await walk(gw, '/v1/entities?cycles=all&entityType=gate', 200);
    expect(same.rows).toEqual(rows);
    const placeholder = (r: BundleRow) => /^[A-Za-z][A-Za-z ]* (?:0x[0-9a-f]+|\d+)$/i.test(nonBlank(r.displayName) ?? nonBlank(r.name) ?? r.id);
    const known = await walk(gw, '/v1/characters?cycles=all&profile=known', 200);
    expect(known.rows.map((r) => r.id)).toEqual(expected('all', (r) => r.entityType === 'character' && !placeholder(r)));
    expect(known.rows.length).toBeLessThan(expected('all', (r) => r.entityType === 'character').length);
  });
});

describe('typed collections', () => {
  it.each(Object.entries(TYPED))('/v1/%s lists the %s entities in scope', async (collection, type) => {
    const { rows } = await walk(gw, `/v1/${collection}`, 50);
    expect(rows.map((r) => r.id)).toEqual(expected('default', (r) => r.entityType === type));
  });

  it('finds a typed entity by id or slug, and not under another type', async () => {
    const gate = entities.find((r) => r.entityType === 'gate')!;
    expect((await gw.get(`/v1/gates/${encodeURIComponent(gate.id)}`)).body.data).toEqual(gate);
    expect((await gw.get(`/v1/gates/${gate.slug}`)).body.data).toEqual(gate);
    const wrong = await gw.get(`/v1/systems/${encodeURIComponent(gate.id)}`);
    expect(wrong.status).toBe(404);
    expect(wrong.body.error).toEqual({ code: 'not_found', message: 'Entity not found.' });
  });
});

describe('/v1/types', () => {
  const typeIdOf = (r: BundleRow) => /:type:([^:]+)$/.exec(r.id)?.[1];

  it('lists the static types in scope', async () => {
    const { rows } = await walk(gw, '/v1/types', 20);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.map((r) => r.id)).toEqual(expected('default', (r) => typeIdOf(r) !== undefined));
  });

  it('finds a static type by its numeric id in the environment, 404 otherwise', async () => {
    const row = entities.find((r) => r.environment === 'stillness' && typeIdOf(r) !== undefined)!;
    const typeId = typeIdOf(row)!;
    const first = entities.filter((r) => r.environment === 'stillness' && typeIdOf(r) === typeId).sort((a, b) => byteCompare(a.id, b.id))[0];
    expect((await gw.get(`/v1/types/${typeId}`)).body.data).toEqual(first);
    const missing = await gw.get('/v1/types/1');
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toBe('Static type not found.');
    expect((await gw.get(`/v1/types/${typeId}?environment=nowhere`)).status).toBe(404);
  });
});

describe('entity detail and provenance', () => {
  async function busiest(file: string, key: (r: BundleRow) => string[]): Promise<[string, BundleRow[]]> {
    const rows = await readAllRows(gw.bundleDir, file);
    const by = new Map<string, BundleRow[]>();
    for (const row of rows) for (const k of key(row)) by.set(k, [...(by.get(k) ?? []), row]);
    return [...by.entries()].sort((a, b) => b[1].length - a[1].length)[0]!;
  }

  it('returns an entity by id and by slug, 404 otherwise', async () => {
    const row = entities[3]!;
    expect((await gw.get(`/v1/entities/${encodeURIComponent(row.id)}`)).body.data).toEqual(row);
    expect((await gw.get(`/v1/entities/${row.slug}`)).body.data).toEqual(row);
    expect((await gw.get('/v1/entities/nope:nope')).status).toBe(404);
  });

  it('pages all facts of an entity by key, then source', async () => {
    const [id, rows] = await busiest('facts.jsonl', (r) => [r.entityId]);
    const unique = [...new Map(rows.map((r) => [`${r.key}|${r.sourceId}`, r])).values()];
    unique.sort((a, b) => byteCompare(a.key, b.key) || byteCompare(a.sourceId ?? '', b.sourceId ?? ''));
    const { rows: got } = await walk(gw, `/v1/entities/${encodeURIComponent(id)}/facts`, 3);
    expect(got).toEqual(unique);
  });

  it('pages relations where the entity is subject or object', async () => {
    const [id, rows] = await busiest('relations.jsonl', (r) => [r.subjectEntityId, r.objectEntityId]);
    const key = (r: BundleRow) => `relation:${r.subjectEntityId}:${r.predicate}:${r.objectEntityId}:${r.sourceId ?? ''}`;
    const unique = [...new Map(rows.map((r) => [key(r), r])).values()];
    const { rows: got } = await walk(gw, `/v1/entities/${encodeURIComponent(id)}/relations`, 4);
    expect(new Set(got.map(key))).toEqual(new Set(unique.map(key)));
    expect(got).toHaveLength(unique.length);
    const sorted = [...got].sort((a, b) => byteCompare(a.predicate, b.predicate) || byteCompare(a.objectEntityId, b.objectEntityId) || byteCompare(a.sourceId ?? '', b.sourceId ?? '') || byteCompare(key(a), key(b)));
    expect(got).toEqual(sorted);
  });

  it('pages the sources of an entity and shows them in the history', async () => {
    const [id, rows] = await busiest('entity_sources.jsonl', (r) => [r.entityId]);
    const { rows: got } = await walk(gw, `/v1/entities/${encodeURIComponent(id)}/sources`, 2);
    expect(new Set(got.map((s) => s.id))).toEqual(new Set(rows.map((r) => r.source.id)));
    const history = await gw.get(`/v1/entities/${encodeURIComponent(id)}/history`);
    expect(history.body.data.entity.id).toBe(id);
    expect(history.body.data.sources).toHaveLength(Math.min(200, got.length));
    expect(history.body.data.truncated).toEqual({ facts: expect.any(Boolean), relations: expect.any(Boolean), sources: false });
  });
});

describe('/v1/search', () => {
  const someone = () => entities.find((r) => r.environment === 'stillness' && inScope(cycleOf(r), 'default', current) && /^[A-Za-z]{5,} [A-Za-z]{3,}$/.test(r.name))!;

  it('requires q', async () => {
    const { status, body } = await gw.get('/v1/search');
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'bad_request', details: { parameter: 'q' } });
  });

  it('puts an exact id, slug or name first', async () => {
    const row = someone();
    for (const q of [row.id, row.slug, row.name, row.name.toUpperCase()]) {
      const { body } = await gw.get(`/v1/search?q=${encodeURIComponent(q)}&limit=3`);
      expect(body.data[0].id, q).toBe(row.id);
    }
  });

  it('finds a name by a prefix and with a typo', async () => {
    const row = someone();
    const [first] = row.name.split(' ');
    const prefix = await walk(gw, `/v1/search?q=${encodeURIComponent(first.slice(0, 4))}`, 200);
    expect(prefix.rows.map((r) => r.id)).toContain(row.id);
    const typo = `${first.slice(0, 2)}${first[3]}${first[2]}${first.slice(4)}`;
    const fuzzy = await walk(gw, `/v1/search?q=${encodeURIComponent(typo)}`, 200);
    expect(fuzzy.rows.map((r) => r.id)).toContain(row.id);
  });

  it('walks a broad query by score, each hit once', async () => {
    const all = await walk(gw, '/v1/search?q=a&cycles=all', 200);
    const paged = await walk(gw, '/v1/search?q=a&cycles=all', 5);
    expect(paged.rows.map((r) => r.id)).toEqual(all.rows.map((r) => r.id));
    expect(new Set(all.rows.map((r) => r.id)).size).toBe(all.rows.length);
  });

  it.each(['100%', 'a_b', '*', '"quoted', '(x OR y)', 'name:zeta', 'a\\b', '/regex/'])('treats %s as text, not syntax', async (q) => {
    expect((await gw.get(`/v1/search?q=${encodeURIComponent(q)}`)).status).toBe(200);
  });

  it('refuses a q longer than 200 characters', async () => {
    const { status, body } = await gw.get(`/v1/search?q=${'x'.repeat(201)}`);
    expect(status).toBe(400);
    expect(body.error.details).toEqual({ parameter: 'q' });
  });
});

describe('the edge', () => {
  it.each([
    ['limit=0', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['cycles=abc', 'cycles'],
    ['cycles=5&cycle=6', 'cycles'],
    ['cycle=x', 'cycle'],
    ['cycles=5,,6', 'cycles'],
    ['color=red', 'color'],
    ['limit=5&limit=6', 'limit'],
    ['cursor=garbage', 'cursor'],
    ['profile=verified', 'profile'],
  ])('refuses %s naming %s', async (query, parameter) => {
    const { status, body } = await gw.get(`/v1/entities?${query}`);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'bad_request', details: { parameter } });
    expect(body.meta).toEqual({ registry: gw.config.registryName, apiVersion: 'v1' });
  });

  it('clamps limit above 200', async () => {
    const { status, body } = await gw.get('/v1/entities?limit=500&cycles=all');
    expect(status).toBe(200);
    expect(body.data).toHaveLength(Math.min(200, expected('all').length));
  });

  it('binds cursors to route and filters', async () => {
    const first = await gw.get('/v1/entities?limit=2');
    expect((await gw.get(`/v1/systems?cursor=${first.body.nextCursor}`)).status).toBe(400);
    expect((await gw.get(`/v1/entities?environment=utopia&cursor=${first.body.nextCursor}`)).status).toBe(400);
    expect((await gw.get(`/v1/entities?limit=9&cursor=${first.body.nextCursor}`)).status).toBe(200);
  });

  it('answers a malformed % escape with 400 and other methods with 405 + Allow', async () => {
    const bad = await gw.get('/v1/entities/%E0%A4');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('bad_request');
    const post = await gw.get('/v1/entities', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toMatch(/GET/);
    expect(post.body.error.code).toBe('method_not_allowed');
  });
});
