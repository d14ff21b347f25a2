/**
 * `/v1/changes` over loads A → B → C (KEEP_GENERATIONS=3) whose every file loses rows, changes
 * rows and gains rows (facts and relations included): walked page by page, A → C equals the
 * files' difference row for row — collection, id, kind, the row before and after — in collection
 * order then id byte order, and applied to A's rows gives C's; the default pair is B → C; the
 * `collection` and `change` filters keep exactly their part; bad pairs are 400 naming `to` or
 * `from`, unknown bundles 404, and once a fourth load drops A, 410. Expected values come from the
 * bundle files (identities: harness/bundle-counts.ts, written apart from the loader).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeNextExport } from '../../generator/next-export.ts';
import { type BundleRow, readAllRows } from '../../generator/read-bundle.ts';
import { IDENTITY } from '../../harness/bundle-counts.ts';
import { byteCompare, expectError } from '../support/expect.ts';
import { bundleIdOf } from '../support/bundle-id.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';

/** The collections, in the order the route documents (the loader's load order). */
const COLLECTIONS = ['entities', 'sources', 'facts', 'relations', 'entity_sources', 'source_artefacts', 'current_entities', 'current_relations', 'killmails', 'events', 'chain_objects'];

/** A row under a new identity, for each collection's notion of one. */
const RENAMED: Record<string, (row: BundleRow, tag: string) => BundleRow> = {
  facts: (r, tag) => ({ ...r, key: `${r.key}_${tag}` }),
  relations: (r, tag) => ({ ...r, sourceId: `${r.sourceId}:${tag}` }),
  entity_sources: (r, tag) => ({ ...r, source: { ...r.source, id: `${r.source.id}:${tag}` } }),
  current_entities: (r, tag) => ({ ...r, entity: { ...r.entity, id: `${r.entity.id}:${tag}` } }),
};
const renamed = (stem: string, row: BundleRow, tag: string) => (RENAMED[stem] ?? ((r, t) => ({ ...r, id: `${r.id}:${t}` })))(row, tag);

/** Every file's next export (and some characters in new tribes): its second row and every 37th (from an offset) gone, its third and every 41st changed, its first and every 43rd copied under a new identity. */
function editsFor(tag: string, offset: number) {
  return Object.fromEntries(
    COLLECTIONS.map((stem) => [
      stem,
      async function* (rows: AsyncIterable<BundleRow>) {
        let i = 0;
        let member = 0;
        for await (const row of rows) {
          i += 1;
          // Memberships: every third `belongs_to` gone (its character leaves, unless another source says it too).
          if (stem === 'relations' && row.predicate === 'belongs_to' && (member += 1) % 3 === offset % 3) continue;
          if (i === 2 || (i + offset) % 37 === 0) continue;
          yield i === 3 || (i + offset) % 41 === 0 ? { ...row, changedIn: tag } : row;
          if (i === 1 || (i + offset) % 43 === 0) yield renamed(stem, row, tag);
          // And the character of the next one joins a tribe of this export's own.
          if (stem === 'relations' && row.predicate === 'belongs_to' && member % 3 === (offset + 1) % 3) yield { ...row, objectEntityId: `tribe:stillness:${tag}${i}` };
        }
      },
    ]),
  );
}

interface Change {
  collection: string;
  id: string;
  change: 'added' | 'changed' | 'removed';
  before?: BundleRow | null;
  after?: BundleRow | null;
}

/** A collection's rows in a bundle, by identity (the last row of an identity wins, as in the index). */
async function rowsById(dir: string, stem: string): Promise<Map<string, BundleRow>> {
  return new Map((await readAllRows(dir, `${stem}.jsonl`)).map((row) => [IDENTITY[stem]!(row), row]));
}

/** The difference of two bundles' files, in the route's order. */
async function difference(fromDir: string, toDir: string): Promise<Change[]> {
  const out: Change[] = [];
  for (const collection of COLLECTIONS) {
    const [was, is] = await Promise.all([rowsById(fromDir, collection), rowsById(toDir, collection)]);
    const ids = [...new Set([...was.keys(), ...is.keys()])].sort(byteCompare);
    for (const id of ids) {
      const before = was.get(id);
      const after = is.get(id);
      if (before && !after) out.push({ collection, id, change: 'removed', before });
      else if (!before && after) out.push({ collection, id, change: 'added', after });
      else if (JSON.stringify(before) !== JSON.stringify(after)) out.push({ collection, id, change: 'changed', before, after });
    }
  }
  return out;
}

/** The (character, tribe) pairs a bundle's `belongs_to` relations state, by any source. */
async function memberships(dir: string): Promise<Set<string>> {
  const rows = await readAllRows(dir, 'relations.jsonl');
  return new Set(rows.filter((r) => r.predicate === 'belongs_to').map((r) => JSON.stringify([r.subjectEntityId, r.objectEntityId])));
}

/** Who joined and who left between two bundles' files, by character then tribe (byte order). */
async function membershipChanges(fromDir: string, toDir: string): Promise<{ characterId: string; tribeId: string; change: string }[]> {
  const [was, is] = await Promise.all([memberships(fromDir), memberships(toDir)]);
  const pairs = [...new Set([...was, ...is])].map((p) => JSON.parse(p) as [string, string]);
  pairs.sort(([s1, o1], [s2, o2]) => byteCompare(s1, s2) || byteCompare(o1, o2));
  return pairs.flatMap(([characterId, tribeId]) => {
    const key = JSON.stringify([characterId, tribeId]);
    if (was.has(key) === is.has(key)) return [];
    return [{ characterId, tribeId, change: is.has(key) ? 'joined' : 'left' }];
  });
}

let gw: TestGateway;
let work: string;
const bundles: { dir: string; id: string }[] = [];

beforeAll(async () => {
  // Three shards: the merge reads each index in id order across shards.
  gw = await startTestGateway({ name: 'changes-route', scale: 1, seed: 58, env: { KEEP_GENERATIONS: '3', ES_MIN_SHARDS: '3' } });
  work = await mkdtemp(path.join(tmpdir(), 'changes-route-'));
  bundles.push({ dir: gw.bundleDir, id: await bundleIdOf(gw.bundleDir) });
  for (const [n, tag] of ['b', 'c'].entries()) {
    const dir = path.join(work, tag);
    await writeNextExport(bundles.at(-1)!.dir, dir, editsFor(tag, n * 11));
    await gw.loadNext(dir);
    bundles.push({ dir, id: await bundleIdOf(dir) });
  }
}, 300_000);

afterAll(async () => {
  await gw?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** Every page of `route?query`, and the meta of the last. */
async function walk(query: string, route = '/v1/changes'): Promise<{ changes: Change[]; pages: number; last: Record<string, unknown> }> {
  const changes: Change[] = [];
  let res = await gw.get(`${route}?${query}`);
  for (let pages = 1; ; pages += 1) {
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    changes.push(...res.body.data);
    if (!res.body.nextCursor) return { changes, pages, last: res.body.meta };
    expect(res.body.meta.countIsExact).toBe(false);
    res = await gw.get(`${route}?${query}&cursor=${encodeURIComponent(res.body.nextCursor)}`);
  }
}

describe('/v1/changes', () => {
  it('from A to C, page by page, equals the files’ difference row for row, and applied to A gives C', async () => {
    const [a, , c] = bundles;
    const expected = await difference(a!.dir, c!.dir);
    // Every collection lost, changed and gained rows between the two.
    for (const collection of COLLECTIONS) for (const kind of ['added', 'changed', 'removed']) expect(expected.some((e) => e.collection === collection && e.change === kind), `${collection} ${kind}`).toBe(true);
    const { changes, pages, last } = await walk(`from=${a!.id}&to=${c!.id}&limit=37`);
    expect(pages).toBeGreaterThan(2);
    expect(changes).toEqual(expected);
    const generatedAt = async (dir: string) => JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')).generatedAt;
    expect(last).toMatchObject({ from: a!.id, to: c!.id, bundleId: c!.id, count: expected.length, countIsExact: true });
    expect([Date.parse(String(last.fromGeneratedAt)), Date.parse(String(last.toGeneratedAt))]).toEqual([Date.parse(await generatedAt(a!.dir)), Date.parse(await generatedAt(c!.dir))]);
    for (const collection of COLLECTIONS) {
      const rows = await rowsById(a!.dir, collection);
      for (const change of changes.filter((x) => x.collection === collection)) {
        if (change.change === 'removed') rows.delete(change.id);
        else rows.set(change.id, change.after!);
      }
      expect(rows, collection).toEqual(await rowsById(c!.dir, collection));
    }
  });

  it('defaults to the bundle before the live one, to the live one', async () => {
    const [, b, c] = bundles;
    const { changes, last } = await walk('limit=200');
    expect(last).toMatchObject({ from: b!.id, to: c!.id });
    expect(changes).toEqual(await difference(b!.dir, c!.dir));
  });

  it('keeps exactly the collections and kinds asked', async () => {
    const [a, b] = bundles;
    const { changes } = await walk(`from=${a!.id}&to=${b!.id}&collection=facts|relations&change=removed|added&limit=50`);
    const expected = (await difference(a!.dir, b!.dir)).filter((e) => ['facts', 'relations'].includes(e.collection) && e.change !== 'changed');
    expect(expected.length).toBeGreaterThan(0);
    expect(changes).toEqual(expected);
  });

  it('/v1/memberships: who joined and who left, by any source, equals the belongs_to pairs’ difference; tribe= keeps one tribe’s', async () => {
    const [a, , c] = bundles;
    const expected = await membershipChanges(a!.dir, c!.dir);
    expect(expected.some((m) => m.change === 'joined') && expected.some((m) => m.change === 'left')).toBe(true);
    const { changes, last } = await walk(`from=${a!.id}&to=${c!.id}&limit=3`, '/v1/memberships');
    expect(changes).toEqual(expected);
    expect(last).toMatchObject({ from: a!.id, to: c!.id, count: expected.length, countIsExact: true });
    // A relation from a new source of a membership already held changed relations, not memberships.
    const held = await memberships(a!.dir);
    const newSource = (await difference(a!.dir, c!.dir)).some((x) => x.change === 'added' && x.collection === 'relations' && x.after?.predicate === 'belongs_to' && held.has(JSON.stringify([x.after.subjectEntityId, x.after.objectEntityId])));
    expect(newSource).toBe(true);
    const tribe = expected.find((m) => m.change === 'left')!.tribeId;
    expect((await walk(`from=${a!.id}&to=${c!.id}&tribe=${encodeURIComponent(tribe)}`, '/v1/memberships')).changes).toEqual(expected.filter((m) => m.tribeId === tribe));
  });

  it('as a file: NDJSON holds the files’ difference line for line, CSV the same rows, X-Total-Count their number; select keeps fields', async () => {
    const [a, , c] = bundles;
    const expected = await difference(a!.dir, c!.dir);
    const ndjson = await gw.get(`/v1/changes?from=${a!.id}&to=${c!.id}&format=ndjson`);
    expect(ndjson.status).toBe(200);
    expect(ndjson.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(ndjson.headers.get('x-total-count')).toBe(String(expected.length));
    expect(ndjson.headers.get('x-truncated')).toBeNull();
    expect(ndjson.text.split('\n').filter(Boolean).map((line) => JSON.parse(line))).toEqual(expected);
    const csv = await gw.get(`/v1/changes?from=${a!.id}&to=${c!.id}&format=csv&collection=facts`);
    const facts = expected.filter((e) => e.collection === 'facts');
    const lines = csv.text.split('\r\n').filter(Boolean);
    expect(lines[0]).toBe('collection,id,change,before,after');
    expect(lines.length - 1).toBe(facts.length);
    expect(csv.headers.get('x-total-count')).toBe(String(facts.length));
    // Only the kinds, and no row read: each change as {id, collection, change}.
    const light = await gw.get(`/v1/changes?from=${a!.id}&to=${c!.id}&format=ndjson&select=collection,change`);
    expect(light.text.split('\n').filter(Boolean).map((line) => JSON.parse(line))).toEqual(expected.map(({ id, collection, change }) => ({ id, collection, change })));
    const page = await gw.get(`/v1/changes?from=${a!.id}&to=${c!.id}&select=before&limit=5`);
    expect(page.body.data).toEqual(expected.slice(0, 5).map(({ id, before }) => ({ id, ...(before !== undefined && { before }) })));
    // Memberships too.
    const members = await gw.get(`/v1/memberships?from=${a!.id}&to=${c!.id}&format=ndjson`);
    expect(members.text.split('\n').filter(Boolean).map((line) => JSON.parse(line))).toEqual(await membershipChanges(a!.dir, c!.dir));
  });

  it('refuses bad pairs, unknown and malformed bundles, and a cursor of other filters', async () => {
    const [a, b, c] = bundles;
    expectError(await gw.get(`/v1/changes?from=${c!.id}&to=${a!.id}`), 400, 'bad_request', 'to');
    expectError(await gw.get(`/v1/changes?from=${b!.id}&to=${b!.id}`), 400, 'bad_request', 'to');
    expectError(await gw.get(`/v1/changes?from=${'f'.repeat(64)}`), 404, 'not_found', 'from');
    expectError(await gw.get('/v1/changes?to=not/a/bundle'), 400, 'bad_request', 'to');
    expectError(await gw.get('/v1/changes?collection=battle_kills'), 400, 'bad_request', 'collection');
    expectError(await gw.get('/v1/changes?change=moved'), 400, 'bad_request', 'change');
    const first = await gw.get(`/v1/changes?from=${a!.id}&limit=1`);
    expect(first.body.nextCursor).toBeDefined();
    expectError(await gw.get(`/v1/changes?from=${b!.id}&limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`), 400, 'bad_request', 'cursor');
  });

  it('answers 410 for a bundle no longer kept, naming the oldest kept one', async () => {
    const [a, b] = bundles;
    const dir = path.join(work, 'd');
    await writeNextExport(bundles.at(-1)!.dir, dir, editsFor('d', 23));
    await gw.loadNext(dir);
    const gone = await gw.get(`/v1/changes?from=${a!.id}`);
    expectError(gone, 410, 'gone');
    expect(gone.body.error.details).toMatchObject({ parameter: 'from', oldestKept: b!.id });
  });
});
