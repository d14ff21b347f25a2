/**
 * `/v1/current/{collection}` over a real Elasticsearch: the 17 entity collections and the two
 * relation feeds, in every scope, with the entity fallback decided per collection and scope
 * (never per page), `q` and `profile`. Expected rows come from current_entities.jsonl,
 * current_relations.jsonl and entities.jsonl (test/support/expect.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BundleRow } from '../../generator/read-bundle.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import {
  type Bundle, CURRENT_ENTITY, CURRENT_RELATION, SCOPES, currentRowsOf, expectError, expectedCurrent, fold, isPlaceholderName,
  readBundle, relationKey, walk, withQuery,
} from '../support/expect.ts';

const COLLECTIONS = [...Object.keys(CURRENT_ENTITY), ...Object.keys(CURRENT_RELATION)];

let gw: TestGateway;
let b: Bundle;
/** Collections that fall back to several entity rows in environment `unknown`, default scope. */
let FALLBACK: string[] = [];
const enc = encodeURIComponent;
/** The id a listed row is known by, whatever its shape. */
const idOf = (r: BundleRow) => r.entity?.id ?? (r.predicate ? relationKey(r) : r.id);

beforeAll(async () => {
  // Scale 4, seed 8: the smallest bundle found with a fallback collection of several rows.
  gw = await startTestGateway({ name: 'current-spec', scale: 4, seed: 8 });
  b = await readBundle(gw.bundleDir);
  FALLBACK = Object.keys(CURRENT_ENTITY).filter((c) => {
    const want = expectedCurrent(b, c, 'default', 'unknown');
    return want.mode === 'entities' && want.rows.length > 1;
  });
}, 300_000);

afterAll(() => gw?.close());

describe('every collection in every scope', () => {
  it('has data that exercises both modes and the relation feeds', () => {
    expect(Object.keys(CURRENT_ENTITY).filter((c) => expectedCurrent(b, c, 'default').mode === 'current').length).toBeGreaterThan(10);
    // The generator writes no current rows for environment `unknown`: there every collection falls back.
    expect(FALLBACK.length, 'a fallback collection with several entity rows').toBeGreaterThan(0);
    for (const feed of Object.keys(CURRENT_RELATION)) expect(expectedCurrent(b, feed, 'default').rows.length, feed).toBeGreaterThan(0);
  });

  const cases = COLLECTIONS.flatMap((c) => SCOPES.map(([query, scope]) => [c, query || '(default)', query, scope] as const));
  it.each(cases)('/v1/current/%s %s: a walk at limit 3 lists the expected rows verbatim, in order', async (collection, _label, query, scope) => {
    const want = expectedCurrent(b, collection, scope);
    const { rows } = await walk(gw, withQuery(`/v1/current/${collection}`, query), 3);
    expect(rows.map(idOf)).toEqual(want.rows.map(idOf));
    expect(rows).toEqual(want.rows);
  });

  const envCases = COLLECTIONS.flatMap((c) => ['utopia', 'unknown'].map((env) => [c, env] as const));
  it.each(envCases)('/v1/current/%s in environment %s', async (collection, env) => {
    const want = expectedCurrent(b, collection, 'all', env);
    const { rows } = await walk(gw, `/v1/current/${collection}?cycles=all&environment=${env}`, 2);
    expect(rows).toEqual(want.rows);
    expect((await gw.get(`/v1/current/${collection}?environment=nope`)).body.data).toEqual([]);
  });
});

describe('/metrics', () => {
  it('counts in each default-scope current gauge what the route lists by default, fallback included', async () => {
    // Environment `unknown` has fallback collections with rows; the same seed and scale give the same bundle.
    const other = await startTestGateway({ name: 'current-gauges', scale: 4, seed: 8, env: { DEFAULT_ENVIRONMENT: 'unknown' } });
    try {
      const { text } = await other.get('/metrics');
      for (const collection of Object.keys(CURRENT_ENTITY)) {
        const gauge = new RegExp(`^blackrelay_api_default_scope_current_${collection} (\\d+)$`, 'm').exec(text);
        expect(Number(gauge?.[1]), collection).toBe(expectedCurrent(b, collection, 'default', 'unknown').rows.length);
      }
    } finally {
      await other.close();
    }
  });
});

describe('fallback is decided per collection and scope, not per page', () => {
  it('keeps current rows when q matches none of them (no flip to entity rows)', async () => {
    // A collection with current rows, and the name of one of its entities that has no current row.
    const collection = Object.keys(CURRENT_ENTITY).find((c) => {
      const current = new Set(currentRowsOf(b, c, 'default').map((r) => r.entity.id));
      return current.size > 0 && b.entities.some((e) => e.entityType === CURRENT_ENTITY[c]!.type && e.environment === 'stillness' && !current.has(e.id));
    })!;
    expect(collection).toBeDefined();
    const current = new Set(currentRowsOf(b, collection, 'default').map((r) => r.entity.id));
    const missing = b.entities.find((e) => e.entityType === CURRENT_ENTITY[collection]!.type && e.environment === 'stillness' && !current.has(e.id))!;
    const { rows } = await walk(gw, `/v1/current/${collection}?q=${enc(missing.id)}`, 2);
    for (const row of rows) expect(row.entity, JSON.stringify(row).slice(0, 200)).toBeDefined();
    expect(rows.map(idOf)).not.toContain(missing.id);
  });

  it.each(['', 'cycles=all'])('lists entity rows on every page of a fallback collection (%s)', async (query) => {
    expect(FALLBACK.length).toBeGreaterThan(0);
    for (const collection of FALLBACK) {
      const want = expectedCurrent(b, collection, query ? 'all' : 'default', 'unknown');
      const { rows, pages } = await walk(gw, withQuery(`/v1/current/${collection}?environment=unknown`, query), 1);
      expect(pages).toBe(Math.max(1, want.rows.length));
      expect(rows).toEqual(want.rows);
      for (const row of rows) expect(row.entityType).toBe(CURRENT_ENTITY[collection]!.type);
    }
  });

  it('refuses a cursor of one collection on another', async () => {
    const first = await gw.get('/v1/current/systems?limit=1');
    expect(first.body.nextCursor).toBeDefined();
    expectError(await gw.get(`/v1/current/gates?limit=1&cursor=${enc(first.body.nextCursor)}`), 400, 'bad_request', 'cursor');
    expectError(await gw.get(`/v1/current/systems?limit=1&q=a&cursor=${enc(first.body.nextCursor)}`), 400, 'bad_request', 'cursor');
  });
});

describe('q and profile', () => {
  it('puts an exact display name first and lists only rows of the collection', async () => {
    for (const collection of ['systems', 'characters', 'assemblies']) {
      const rows = currentRowsOf(b, collection, 'default');
      const name = (r: BundleRow) => r.entity.displayName ?? r.entity.name;
      const target = rows.find((r) => rows.filter((o) => fold(name(o)) === fold(name(r))).length === 1 && /^[\p{L} ]+$/u.test(name(r)))!;
      expect(target, collection).toBeDefined();
      const got = await walk(gw, `/v1/current/${collection}?q=${enc(name(target))}`, 2);
      expect(got.rows[0]?.entity.id).toBe(target.entity.id);
      const allowed = new Set(rows.map((r) => r.entity.id));
      for (const row of got.rows) expect(allowed.has(row.entity.id), row.entity.id).toBe(true);
      expect((await walk(gw, `/v1/current/${collection}?q=${enc(name(target))}`, 200)).rows).toEqual(got.rows);
    }
  });

  it('filters ownership by the words of a display name', async () => {
    const all = expectedCurrent(b, 'ownership', 'default').rows;
    const words = (s: string) => fold(s).split(/[^\p{L}\p{N}]+/u).filter(Boolean);
    const owner = all.map((r) => r.objectDisplayName).find((n) => typeof n === 'string' && /^[A-Za-z]+ [A-Za-z]+$/.test(n))!;
    expect(owner).toBeDefined();
    const want = all.filter((r) => {
      const text = new Set([...words(r.subjectDisplayName ?? r.subjectEntityId), ...words(r.objectDisplayName ?? r.objectEntityId)]);
      return words(owner).every((w) => text.has(w));
    });
    const { rows } = await walk(gw, `/v1/current/ownership?q=${enc(owner)}`, 1);
    expect(new Set(rows.map(relationKey))).toEqual(new Set(want.map(relationKey)));
    expect(rows).toHaveLength(want.length);
  });

  it.each([['known', false], ['placeholder', true]] as const)('profile=%s on current characters', async (profile, placeholder) => {
    const label = (r: BundleRow) => [r.entity.displayName, r.entity.name, r.entity.id].find((v) => typeof v === 'string' && v.trim() !== '');
    const rows = currentRowsOf(b, 'characters', 'all');
    const want = rows.filter((r) => isPlaceholderName(label(r)) === placeholder);
    // Both kinds must exist, or the filter is not tested.
    expect(want.length).toBeGreaterThan(0);
    expect(want.length).toBeLessThan(rows.length);
    const got = await walk(gw, `/v1/current/characters?cycles=all&profile=${profile}`, 3);
    expect(got.rows.map(idOf)).toEqual(want.map(idOf));
  });

  it('refuses bad input on current routes, naming the parameter', async () => {
    expectError(await gw.get('/v1/current/characters?profile=verified'), 400, 'bad_request', 'profile');
    expectError(await gw.get('/v1/current/ownership?profile=known'), 400, 'bad_request', 'profile');
    expectError(await gw.get('/v1/current/systems?limit=0'), 400, 'bad_request', 'limit');
    expectError(await gw.get('/v1/current/systems?cycles=x'), 400, 'bad_request', 'cycles');
    expectError(await gw.get('/v1/current/systems?cursor=%21%21'), 400, 'bad_request', 'cursor');
    expectError(await gw.get('/v1/current/nowhere'), 404, 'not_found');
  });
});
