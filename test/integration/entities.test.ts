/**
 * Entity routes over a real Elasticsearch: `/v1/entities`, the 14 typed collections, details,
 * provenance subroutes, `/v1/search` and the edge's refusals. Every expectation is computed
 * here from the bundle files (test/support/expect.ts), never read back from Elasticsearch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleRow, readAllRows } from '../../generator/read-bundle.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import {
  type Bundle, SCOPES, byteCompare, cycleOf, entityLabel, expectError, expectedEntities, fold, inScope, isPlaceholderName, lastWins, pagesFor,
  readBundle, relationKey, walk, withQuery,
} from '../support/expect.ts';

const TYPED: Record<string, string> = {
  systems: 'system', characters: 'character', tribes: 'tribe', assemblies: 'assembly', gates: 'gate', regions: 'region',
  constellations: 'constellation', items: 'item', materials: 'material', enemies: 'enemy', recipes: 'recipe',
  blueprints: 'blueprint', ships: 'ship', structures: 'structure',
};

let gw: TestGateway;
let b: Bundle;
const enc = encodeURIComponent;
const ids = (rows: BundleRow[]) => rows.map((r) => r.id);

beforeAll(async () => {
  gw = await startTestGateway({ name: 'entities-spec', scale: 2, seed: 7 });
  b = await readBundle(gw.bundleDir);
}, 300_000);

afterAll(() => gw?.close());

describe('/v1/entities', () => {
  it.each([7, 200])('walks the default scope (stillness, current cycle + uncycled) in label order at limit %i', async (limit) => {
    const want = expectedEntities(b, 'default');
    // The default scope must mix cycled and uncycled rows and leave rows out, or it proves nothing.
    expect(b.entities.some((r) => r.environment === 'stillness' && cycleOf(r.cycle) === undefined)).toBe(true);
    expect(want.length).toBeLessThan(b.entities.filter((r) => r.environment === 'stillness').length);
    const { rows, pages } = await walk(gw, '/v1/entities', limit);
    expect(ids(rows)).toEqual(want);
    expect(pages).toBe(pagesFor(want.length, limit));
  });

  it('returns each row verbatim as exported', async () => {
    const { rows } = await walk(gw, '/v1/entities?cycles=all', 200);
    const byId = new Map(b.entities.map((r) => [r.id, r]));
    for (const row of rows) expect(row).toEqual(byId.get(row.id));
  });

  it.each(SCOPES.filter(([q]) => q !== ''))('scopes %s', async (query, scope) => {
    const { rows } = await walk(gw, `/v1/entities?${query}`, 50);
    expect(ids(rows)).toEqual(expectedEntities(b, scope));
  });

  it('lists another environment, and an empty list for an unknown one', async () => {
    const other = b.entities.find((r) => r.environment !== 'stillness')!.environment;
    const { rows } = await walk(gw, `/v1/entities?environment=${other}`, 9);
    expect(ids(rows)).toEqual(expectedEntities(b, 'default', () => true, other));
    expect(rows.length).toBeGreaterThan(0);
    const nope = await gw.get('/v1/entities?environment=nope');
    expect(nope.status).toBe(200);
    expect(nope.body.data).toEqual([]);
    expect(nope.body.nextCursor).toBeUndefined();
  });

  it('walks names in other scripts (CJK, emoji, accents) one row at a time', async () => {
    const want = expectedEntities(b, 'all', (r) => /[^\x00-\x7f]/.test(r.displayName ?? r.name));
    expect(want.some((id) => /[\u3040-\u9fff]/u.test(entityLabel(b.entities.find((r) => r.id === id)!)))).toBe(true);
    const { rows } = await walk(gw, '/v1/entities?cycles=all', 1);
    const got = ids(rows).filter((id) => want.includes(id));
    expect(got).toEqual(want);
  });
});

describe('typed collections', () => {
  it.each(Object.entries(TYPED))('/v1/%s walks the %s entities in scope', async (collection, type) => {
    const want = expectedEntities(b, 'default', (r) => r.entityType === type);
    const { rows } = await walk(gw, `/v1/${collection}`, 2);
    expect(ids(rows)).toEqual(want);
    const all = await walk(gw, `/v1/${collection}?cycles=all`, 200);
    expect(ids(all.rows)).toEqual(expectedEntities(b, 'all', (r) => r.entityType === type));
  });
});

describe('entity detail', () => {
  it('finds an entity by id and by slug, outside the default scope too', async () => {
    const row = b.entities.find((r) => r.environment === 'utopia' && cycleOf(r.cycle) === 5)!;
    expect((await gw.get(`/v1/entities/${enc(row.id)}`)).body.data).toEqual(row);
    expect((await gw.get(`/v1/entities/${enc(row.slug)}`)).body.data).toEqual(row);
  });

  it('finds a typed entity under its type only: another type is 404 not_found', async () => {
    const gate = b.entities.find((r) => r.entityType === 'gate')!;
    expect((await gw.get(`/v1/gates/${enc(gate.id)}`)).body.data).toEqual(gate);
    expect((await gw.get(`/v1/gates/${enc(gate.slug)}`)).body.data).toEqual(gate);
    expectError(await gw.get(`/v1/systems/${enc(gate.id)}`), 404, 'not_found');
  });

  it('answers an unknown id with 404 not_found', async () => {
    expectError(await gw.get('/v1/entities/character%3Astillness%3A1'), 404, 'not_found');
    expectError(await gw.get('/v1/characters/nobody'), 404, 'not_found');
  });
});

describe('provenance subroutes', () => {
  /** Expected rows per subroute, from the files: last row of a key wins, in the documented order. */
  const factKey = (r: BundleRow) => `${r.entityId}:${r.key}:${r.sourceId}`;
  const sourceKey = (r: BundleRow) => `${r.entityId}:${r.source.id}`;
  const ends = (r: BundleRow) => [r.subjectEntityId, r.objectEntityId];
  const kind = (s: BundleRow) => s.sourceKind ?? s.kind ?? '\uffff'; // no kind sorts last
  let files: Record<'facts' | 'relations' | 'sources', BundleRow[]>;
  const expected = {
    facts: (id: string) => lastWins(files.facts.filter((r) => r.entityId === id), factKey).sort((x, y) => byteCompare(x.key, y.key) || byteCompare(x.sourceId, y.sourceId)),
    relations: (id: string) => lastWins(files.relations.filter((r) => ends(r).includes(id)), relationKey).sort(
      (x, y) => byteCompare(x.predicate, y.predicate) || byteCompare(x.objectEntityId, y.objectEntityId) || byteCompare(x.sourceId, y.sourceId) || byteCompare(relationKey(x), relationKey(y)),
    ),
    sources: (id: string) => lastWins(files.sources.filter((r) => r.entityId === id), sourceKey).map((r) => r.source).sort((x, y) => byteCompare(kind(x), kind(y)) || byteCompare(x.id, y.id)),
  };
  /** The `n` entities with the most rows, plus the first whose key repeats in the file (last row wins). */
  const chosen = (rows: BundleRow[], entities: (r: BundleRow) => string[], key: (r: BundleRow) => string, n = 3) => {
    const count = new Map<string, number>();
    for (const r of rows) for (const k of new Set(entities(r))) count.set(k, (count.get(k) ?? 0) + 1);
    const busiest = [...count.entries()].sort((x, y) => y[1] - x[1] || byteCompare(x[0], y[0])).slice(0, n).map(([k]) => k);
    const seen = new Set<string>();
    const repeated = rows.find((r) => seen.has(key(r)) || !seen.add(key(r)));
    const known = repeated ? entities(repeated).filter((id) => b.entities.some((e) => e.id === id)) : [];
    expect(known.length, 'an entity with a repeated key').toBeGreaterThan(0);
    return [...busiest, known[0]!];
  };

  beforeAll(async () => {
    files = { facts: await readAllRows(b.dir, 'facts.jsonl'), relations: await readAllRows(b.dir, 'relations.jsonl'), sources: await readAllRows(b.dir, 'entity_sources.jsonl') };
  });

  it.each([
    ['facts', 4],
    ['relations', 3],
    ['sources', 2],
  ] as const)('/%s: a full walk is every row of the entity once, in order, the last duplicate winning', async (sub, limit) => {
    const ids = sub === 'facts' ? chosen(files.facts, (r) => [r.entityId], factKey) : sub === 'relations' ? chosen(files.relations, ends, relationKey) : chosen(files.sources, (r) => [r.entityId], sourceKey);
    for (const id of ids) {
      const want = expected[sub](id);
      expect(want.length).toBeGreaterThan(0);
      const { rows, pages } = await walk(gw, `/v1/entities/${enc(id)}/${sub}`, limit);
      expect(rows, `${sub} of ${id}`).toEqual(want);
      expect(pages).toBe(pagesFor(want.length, limit));
    }
  });

  it('/history: the entity and its facts, relations and sources, as the subroutes list them', async () => {
    for (const id of chosen(files.facts, (r) => [r.entityId], factKey, 2)) {
      const { status, body } = await gw.get(`/v1/entities/${enc(b.entities.find((e) => e.id === id)!.slug)}/history`);
      expect(status).toBe(200);
      expect(body.data.entity).toEqual(b.entities.find((r) => r.id === id));
      for (const sub of ['facts', 'relations', 'sources'] as const) expect(body.data[sub], `${sub} of ${id}`).toEqual(expected[sub](id));
      const more = (sub: 'facts' | 'relations' | 'sources') => expected[sub](id).length > 200;
      expect(body.data.truncated).toEqual({ facts: more('facts'), relations: more('relations'), sources: more('sources') });
    }
  });
});

describe('/v1/types and profile', () => {
  const typeIdOf = (r: BundleRow) => /:type:([^:]+)$/.exec(r.id)?.[1];

  it('lists the static types in scope', async () => {
    const { rows } = await walk(gw, '/v1/types', 20);
    expect(rows.length).toBeGreaterThan(0);
    expect(ids(rows)).toEqual(expectedEntities(b, 'default', (r) => typeIdOf(r) !== undefined));
  });

  it('finds a static type by its numeric id in the environment, 404 otherwise', async () => {
    const row = b.entities.find((r) => r.environment === 'stillness' && typeIdOf(r) !== undefined)!;
    const typeId = typeIdOf(row)!;
    const first = b.entities.filter((r) => r.environment === 'stillness' && typeIdOf(r) === typeId).sort((x, y) => byteCompare(x.id, y.id))[0];
    expect((await gw.get(`/v1/types/${typeId}`)).body.data).toEqual(first);
    expectError(await gw.get('/v1/types/1'), 404, 'not_found');
    expectError(await gw.get(`/v1/types/${typeId}?environment=nowhere`), 404, 'not_found');
  });

  it('filters typed characters by profile: known hides placeholder names', async () => {
    const characters = (r: BundleRow) => r.entityType === 'character';
    const known = await walk(gw, '/v1/characters?cycles=all&profile=known', 200);
    expect(ids(known.rows)).toEqual(expectedEntities(b, 'all', (r) => characters(r) && !isPlaceholderName(r.displayName ?? r.name ?? r.id)));
    expect(known.rows.length).toBeLessThan(expectedEntities(b, 'all', characters).length);
  });
});

describe('/v1/search', () => {
  const inDefault = () => b.entities.filter((r) => r.environment === 'stillness' && inScope(cycleOf(r.cycle), 'default', b.currentCycle));
  /** An entity in scope whose name no other in-scope entity shares (as name or display name) and whose first word is long. */
  const distinct = () =>
    inDefault().find((r) => {
      const words = String(r.name).split(' ');
      if (!/^[A-Za-z]{6,}$/.test(words[0]!)) return false;
      return !inDefault().some((o) => o.id !== r.id && [o.name, o.displayName].some((n) => typeof n === 'string' && fold(n) === fold(r.name)));
    })!;
  const search = (q: string, extra = '') => gw.get(`/v1/search?q=${enc(q)}${extra}`);

  it('without q (or with a blank q) answers the entity list page for page, cursors included', async () => {
    for (const query of ['', 'q=', 'q=%20%20', 'cycles=6', 'environment=stillness&type=system']) {
      const search = await walk(gw, withQuery('/v1/search', query), 13);
      const entities = await walk(gw, withQuery('/v1/entities', query.replace(/q=[^&]*&?/, '')), 13);
      expect(ids(search.rows), query).toEqual(ids(entities.rows));
      expect(search.pages, query).toBe(entities.pages);
    }
    const want = expectedEntities(b, [6]);
    expect(ids((await walk(gw, '/v1/search?cycles=6', 50)).rows)).toEqual(want);
    // The same first page, byte for byte (the cursor is bound to the one handler, not the path).
    const [search, entities] = [await gw.get('/v1/search?limit=50'), await gw.get('/v1/entities?limit=50')];
    expect(search.text).toBe(entities.text);
    expect(search.body.nextCursor).toEqual(expect.any(String));
    // A cursor of one path continues on the other.
    const next = await gw.get(`/v1/entities?limit=50&cursor=${enc(search.body.nextCursor)}`);
    expect(next.status).toBe(200);
    expect(ids(next.body.data)).toEqual(expectedEntities(b, 'default').slice(50, 100));
  });

  it("answers the explorer's opening request: the default tab with an empty search box", async () => {
    // registry-site's explorer: GET {base}/v1/search?environment=stillness&limit=50 with `accept: application/json`,
    // from another origin; it reads the JSON body before the status.
    const response = await fetch(`${gw.url}/v1/search?environment=stillness&limit=50`, {
      headers: { accept: 'application/json', Origin: 'http://localhost:4321' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('http://localhost:4321');
    const body: any = await response.json();
    expect(body.error).toBeUndefined();
    expect(ids(body.data)).toEqual(expectedEntities(b, 'default').slice(0, 50));
    const byId = new Map(b.entities.map((r) => [r.id, r]));
    for (const row of body.data) expect(row).toEqual(byId.get(row.id));
    // Its Next button sends the cursor back, URL-encoded, with the same parameters.
    const next = await gw.get(`/v1/search?environment=stillness&limit=50&cursor=${enc(body.nextCursor)}`);
    expect(ids(next.body.data)).toEqual(expectedEntities(b, 'default').slice(50, 100));
  });

  it('puts an exact id, an exact slug and an exact name first', async () => {
    const row = distinct();
    expect(row).toBeDefined();
    for (const q of [row.id, row.slug, row.name, row.name.toUpperCase()]) expect((await search(q, '&limit=5')).body.data[0]?.id, q).toBe(row.id);
  });

  it('finds a name by a prefix of its first word and with a one-letter typo', async () => {
    const row = distinct();
    const word = row.name.split(' ')[0]!;
    const prefix = await walk(gw, `/v1/search?q=${enc(word.slice(0, 4))}`, 200);
    expect(ids(prefix.rows)).toContain(row.id);
    const typo = word.slice(0, 3) + (word[3] === 'x' ? 'y' : 'x') + word.slice(4);
    const fuzzy = await walk(gw, `/v1/search?q=${enc(typo)}`, 200);
    expect(ids(fuzzy.rows)).toContain(row.id);
  });

  it.each(['100%', 'a_b', '*', '"quoted', '(open', 'name:x AND y', '\\', '[a TO z]'])('treats %s as text, not query syntax', async (q) => {
    const res = await search(q);
    expect(res.status).toBe(200);
    // As a wildcard or query syntax these would match (nearly) everything: a full first page.
    expect(inDefault().length).toBeGreaterThan(50);
    expect(res.body.data.length).toBeLessThan(50);
  });

  it('refuses q of 201 characters and accepts 200', async () => {
    expectError(await search('x'.repeat(201)), 400, 'bad_request', 'q');
    expect((await search('x'.repeat(200))).status).toBe(200);
  });

  it('counts q in characters, so 200 emoji (400 UTF-16 units) are accepted', async () => {
    const res = await search('🚀'.repeat(200));
    expect(res.status, JSON.stringify(res.body.error)).toBe(200);
    expectError(await search('🚀'.repeat(201)), 400, 'bad_request', 'q');
  });

  it('filters by type without changing the order of the rest', async () => {
    const all = await walk(gw, '/v1/search?q=a&cycles=all', 200);
    const typed = await walk(gw, '/v1/search?q=a&cycles=all&type=character', 200);
    expect(typed.rows.length).toBeGreaterThan(0);
    expect(ids(typed.rows)).toEqual(ids(all.rows.filter((r) => r.entityType === 'character')));
    expect(ids((await walk(gw, '/v1/search?q=a&cycles=all&entityType=character', 200)).rows)).toEqual(ids(typed.rows));
  });

  it('walks a broad query at limit 5: every hit once, in the one-page order, all in scope', async () => {
    const one = await walk(gw, '/v1/search?q=a', 200);
    const paged = await walk(gw, '/v1/search?q=a', 5);
    expect(ids(paged.rows)).toEqual(ids(one.rows));
    expect(new Set(ids(paged.rows)).size).toBe(paged.rows.length);
    const scope = new Set(ids(inDefault()));
    for (const row of paged.rows) expect(scope.has(row.id), row.id).toBe(true);
  });

  it('finds CJK and emoji names by their exact text and walks them one by one', async () => {
    const names = inDefault().filter((r) => /[\u3040-\u9fff]|\p{Extended_Pictographic}/u.test(r.name));
    expect(names.length).toBeGreaterThan(1);
    for (const row of names) {
      const unique = !inDefault().some((o) => o.id !== row.id && [o.name, o.displayName].some((n) => typeof n === 'string' && fold(n) === fold(row.name)));
      const res = await search(row.name, '&limit=3');
      expect(res.status).toBe(200);
      if (unique) expect(res.body.data[0]?.id, row.name).toBe(row.id);
      const { rows } = await walk(gw, `/v1/search?q=${enc(row.name)}`, 1, 500);
      expect(ids(rows)).toContain(row.id);
    }
  });
});

describe('the edge', () => {
  it.each([
    ['limit=0', 'limit'], ['limit=-1', 'limit'], ['limit=abc', 'limit'],
    ['cycles=abc', 'cycles'], ['cycles=5&cycle=6', 'cycles'], ['cycle=x', 'cycle'],
    ['colour=red', 'colour'], ['cursor=garbage', 'cursor'],
  ])('/v1/entities?%s → 400 naming %s', async (query, parameter) => {
    const res = await gw.get(`/v1/entities?${query}`);
    expectError(res, 400, 'bad_request', parameter);
    expect(res.body.meta).toEqual({ registry: gw.config.registryName, apiVersion: 'v1' });
  });

  it('clamps limit=500 to 200 rows', async () => {
    const { status, body } = await gw.get('/v1/entities?limit=500&cycles=all');
    expect(status).toBe(200);
    expect(b.entities.filter((r) => r.environment === 'stillness').length).toBeGreaterThan(0);
    expect(body.data).toEqual(expect.any(Array));
    expect(body.data.length).toBe(Math.min(200, expectedEntities(b, 'all').length));
    expect(body.data.length).toBeLessThanOrEqual(200);
  });

  it('binds a cursor to its route and its filters', async () => {
    const first = await gw.get('/v1/entities?limit=2');
    const cursor = enc(first.body.nextCursor);
    expectError(await gw.get(`/v1/systems?limit=2&cursor=${cursor}`), 400, 'bad_request', 'cursor');
    expectError(await gw.get(`/v1/entities?limit=2&environment=utopia&cursor=${cursor}`), 400, 'bad_request', 'cursor');
    expectError(await gw.get(`/v1/entities?limit=2&cycles=all&cursor=${cursor}`), 400, 'bad_request', 'cursor');
    const next = await gw.get(`/v1/entities?limit=2&cursor=${cursor}`);
    expect(ids(next.body.data)).toEqual(expectedEntities(b, 'default').slice(2, 4));
  });

  it('refuses a cursor whose position does not fit the sort (400 naming cursor, never 500)', async () => {
    // Issue 4: the cursor is base64url JSON holding search_after values; anything but our own → 400.
    const page = await gw.get('/v1/search?q=a&limit=2');
    const [payload, tag] = page.body.nextCursor.split('.');
    const cursor = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    expect(typeof cursor.a[0]).toBe('number'); // relevance order: the score comes first
    const forged = Buffer.from(JSON.stringify({ ...cursor, a: ['not a score', cursor.a[1]] })).toString('base64url');
    expectError(await gw.get(`/v1/search?q=a&limit=2&cursor=${forged}.${tag}`), 400, 'bad_request', 'cursor');
  });

  it('answers a malformed percent-escape in a path with 400, not 500', async () => {
    expectError(await gw.get('/v1/entities/%E0%A4'), 400, 'bad_request');
    expectError(await gw.get('/v1/entities?q=%E0%A4'), 400, 'bad_request');
  });

  it('answers POST with 405 and an Allow header', async () => {
    const res = await gw.get('/v1/entities', { method: 'POST' });
    expectError(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')?.split(/,\s*/).sort()).toEqual(['GET', 'HEAD', 'OPTIONS']);
  });
});
