/**
 * `/v1/current/{collection}`: the 17 entity collections (with per-collection fallback to
 * entity rows) and the two relation feeds, expectations from the bundle files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleRow, readAllRows, readManifest } from '../../generator/read-bundle.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { type Scope, byteCompare, inScope, walk } from '../support/pages.ts';

/** Collection → entity type; characters and tribes never fall back to plain entities. */
const COLLECTIONS: Record<string, string> = {
  characters: 'character', tribes: 'tribe', assemblies: 'assembly', gates: 'gate', storage: 'storage', turrets: 'turret',
  regions: 'region', constellations: 'constellation', items: 'item', materials: 'material', enemies: 'enemy',
  recipes: 'recipe', blueprints: 'blueprint', ships: 'ship', structures: 'structure', systems: 'system', routes: 'route',
};
const NO_FALLBACK = new Set(['characters', 'tribes']);
const FEEDS: Record<string, string[]> = { ownership: ['owned_by'], 'route-edges': ['links_to', 'observed_between'] };

let gw: TestGateway;
let current: number;
let currentRows: BundleRow[];
let relations: BundleRow[];
let entities: BundleRow[];

const nonBlank = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v : undefined);
const cycleOf = (r: BundleRow) => (Number.isInteger(r.cycle) && r.cycle >= 1 ? r.cycle : undefined);
const labelOf = (e: BundleRow) => (nonBlank(e.displayName) ?? nonBlank(e.name) ?? e.id).slice(0, 256).toLowerCase();
const byLabel = (a: BundleRow, b: BundleRow) => byteCompare(labelOf(a), labelOf(b)) || byteCompare(a.id, b.id);
const hasEvidence = (r: BundleRow) => {
  const keys = Array.isArray(r.facts) ? r.facts.map((f: BundleRow) => f.key) : Object.keys(r.facts ?? {});
  return ['source_event_kind', 'source_event_id', 'transaction_digest'].some((k) => keys.includes(k));
};

/** The rows a collection lists in a scope: current rows, or entity rows when it has none at all. */
function expected(collection: string, scope: Scope, environment = 'stillness'): { mode: 'current' | 'entities'; ids: string[] } {
  const type = COLLECTIONS[collection]!;
  const rows = currentRows
    .filter((r) => (r.entity.entityType ?? r.entity.type) === type && r.entity.environment === environment && inScope(cycleOf(r.entity), scope, current))
    .filter((r) => collection !== 'characters' || hasEvidence(r));
  if (rows.length > 0 || NO_FALLBACK.has(collection)) return { mode: 'current', ids: rows.map((r) => r.entity).sort(byLabel).map((e) => e.id) };
  const fallback = entities.filter((e) => e.entityType === type && e.environment === environment && inScope(cycleOf(e), scope, current));
  return { mode: 'entities', ids: fallback.sort(byLabel).map((e) => e.id) };
}

beforeAll(async () => {
  gw = await startTestGateway({ name: 'current', scale: 2, seed: 9 });
  current = Math.max(...(await readManifest(gw.bundleDir)).cycles);
  currentRows = [...new Map((await readAllRows(gw.bundleDir, 'current_entities.jsonl')).map((r) => [r.entity.id, r])).values()];
  relations = await readAllRows(gw.bundleDir, 'current_relations.jsonl');
  entities = [...new Map((await readAllRows(gw.bundleDir, 'entities.jsonl')).map((r) => [r.id, r])).values()];
}, 300_000);

afterAll(() => gw?.close());

describe('/v1/current entity collections', () => {
  it('has collections in both modes, so both are tested', () => {
    const modes = Object.keys(COLLECTIONS).map((c) => expected(c, 'default').mode);
    expect(modes).toContain('current');
    expect(modes).toContain('entities');
  });

  it.each(Object.keys(COLLECTIONS))('/v1/current/%s walks its rows in scope, one shape on every page', async (collection) => {
    const want = expected(collection, 'default');
    const { rows } = await walk(gw, `/v1/current/${collection}`, 6);
    const ids = rows.map((r) => (want.mode === 'current' ? r.entity.id : r.id));
    expect(ids).toEqual(want.ids);
    for (const row of rows) expect('entity' in row).toBe(want.mode === 'current');
  });

  it('counts on /metrics what each route lists by default, fallback included', async () => {
    // An environment where some collection has entity rows but no current rows: its route and
    // its gauge both show the fallback. The same seed and scale give the same bundle.
    const environments = [...new Set(entities.map((e) => e.environment))];
    const fallbackCase = environments.find((env) =>
      Object.entries(COLLECTIONS).some(([c, type]) => !NO_FALLBACK.has(c) && expected(c, 'default', env).mode === 'entities' && expected(c, 'default', env).ids.length > 0),
    );
    expect(fallbackCase, 'the bundle has a collection that falls back with rows').toBeDefined();
    const other = await startTestGateway({ name: 'current-gauges', scale: 2, seed: 9, env: { DEFAULT_ENVIRONMENT: fallbackCase! } });
    try {
      const { text } = await other.get('/metrics');
      for (const collection of Object.keys(COLLECTIONS)) {
        const gauge = new RegExp(`^registry_api_current_${collection} (\\d+)$`, 'm').exec(text);
        expect(Number(gauge?.[1]), collection).toBe(expected(collection, 'default', fallbackCase).ids.length);
      }
    } finally {
      await other.close();
    }
  });

  it.each([['cycles=all', 'all'], ['cycles=current', 'current'], ['cycles=5', [5]]] as const)('scopes %s', async (query, scope) => {
    for (const collection of ['systems', 'characters', 'gates']) {
      const want = expected(collection, scope as Scope);
      const { rows } = await walk(gw, `/v1/current/${collection}?${query}`, 200);
      expect(rows.map((r) => (want.mode === 'current' ? r.entity.id : r.id)), collection).toEqual(want.ids);
    }
  });

  it('filters current characters by profile and q', async () => {
    const all = expected('characters', 'default').ids;
    const known = await walk(gw, '/v1/current/characters?profile=known', 200);
    const placeholder = await walk(gw, '/v1/current/characters?profile=placeholder', 200);
    expect([...known.rows, ...placeholder.rows].map((r) => r.entity.id).sort()).toEqual([...all].sort());
    const named = currentRows.find((r) => r.entity.id === known.rows[0].entity.id)!;
    const hits = await walk(gw, `/v1/current/characters?q=${encodeURIComponent(named.entity.displayName ?? named.entity.name)}`, 200);
    expect(hits.rows[0].entity.id).toBe(named.entity.id);
  });
});

describe('/v1/current relation feeds', () => {
  it.each(Object.keys(FEEDS))('/v1/current/%s walks its relations; they are uncycled', async (feed) => {
    const label = (r: BundleRow) =>
      `${(nonBlank(r.subjectDisplayName) ?? r.subjectEntityId).slice(0, 256)} | ${(nonBlank(r.objectDisplayName) ?? r.objectEntityId).slice(0, 256)}`.slice(0, 256).toLowerCase();
    const id = (r: BundleRow) => r.id ?? `relation:${r.subjectEntityId}:${r.predicate}:${r.objectEntityId}:${r.sourceId ?? ''}`;
    const rows = [...new Map(relations.filter((r) => FEEDS[feed]!.includes(r.predicate) && r.environment === 'stillness').map((r) => [id(r), r])).values()];
    rows.sort((a, b) => byteCompare(label(a), label(b)) || byteCompare(id(a), id(b)));
    expect(rows.length).toBeGreaterThan(0);
    const got = await walk(gw, `/v1/current/${feed}`, 7);
    expect(got.rows).toEqual(rows);
    expect((await gw.get(`/v1/current/${feed}?cycles=${current}`)).body.data).toEqual([]);
    expect((await walk(gw, `/v1/current/${feed}?cycles=all`, 200)).rows).toEqual(rows);
  });

  it('404s an unknown collection', async () => {
    const { status, body } = await gw.get('/v1/current/dragons');
    expect(status).toBe(404);
    expect(body.error).toEqual({ code: 'not_found', message: 'Route not found.' });
  });
});
