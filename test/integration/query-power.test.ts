/**
 * Query power against a real Elasticsearch: `meta.count`, `group_by` (groups,
 * labels, unknown groups, histograms), `since`/`until`, OR lists, `sort`, `select` and
 * `/v1/autocomplete`. Every expected count, group, bucket and range is computed here from the
 * bundle files, with the rules of the export format and the README, never read back from
 * Elasticsearch and never with the gateway's own code.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleRow, readAllRows } from '../../generator/read-bundle.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { type Key, groupsOf } from '../support/groups.ts';
import { actorsOf, text } from '../support/killmail-labels.ts';
import {
  type Bundle,
  type Scope,
  byteCompare,
  cycleOf,
  cycleOfInstant,
  entityLabel,
  expectError,
  expectedEntities,
  fold,
  inScope,
  instantNanos,
  lastWins,
  newestFirst,
  readBundle,
  relationKey,
  walk,
} from '../support/expect.ts';

let gw: TestGateway;
let b: Bundle;
let events: BundleRow[];
let killmails: BundleRow[];
let facts: BundleRow[];
let sources: Map<string, BundleRow>;
/** Source id → kind as the entities' own sources give it (sources the sources file may not list). */
let entitySourceKinds: Map<string, string>;
let entities: Map<string, BundleRow>;
let npcByRelation: Set<string>;

beforeAll(async () => {
  gw = await startTestGateway({ name: 'query-power', scale: 2, seed: 7 });
  b = await readBundle(gw.bundleDir);
  events = lastWins(await readAllRows(gw.bundleDir, 'events.jsonl'), (r) => r.id);
  killmails = lastWins(await readAllRows(gw.bundleDir, 'killmails.jsonl'), (r) => r.id);
  facts = lastWins(await readAllRows(gw.bundleDir, 'facts.jsonl'), (r) => `${r.entityId}:${r.key}:${r.sourceId ?? ''}`);
  sources = new Map(lastWins(await readAllRows(gw.bundleDir, 'sources.jsonl'), (r) => r.id).map((r) => [r.id, r]));
  entities = new Map(b.entities.map((r) => [r.id, r]));
  entitySourceKinds = new Map(
    (await readAllRows(gw.bundleDir, 'entity_sources.jsonl')).flatMap((r) => {
      const source = r.source ?? r;
      const kind = text(source.sourceKind) ?? text(source.kind);
      return kind ? [[source.id ?? r.sourceId, kind] as [string, string]] : [];
    }),
  );
  const relations = lastWins(await readAllRows(gw.bundleDir, 'relations.jsonl'), relationKey);
  npcByRelation = new Set(relations.filter((r) => r.predicate === 'killer' && r.objectEntityId.startsWith('enemy:')).map((r) => r.subjectEntityId));
}, 300_000);

afterAll(() => gw?.close());

// ---------------------------------------------------------------------------------------------
// What the export format says, mirrored here

const eventCycle = (r: BundleRow) => cycleOf(r.cycle) ?? cycleOfInstant(r.occurredAt);
const inEvents = (scope: Scope, where: (r: BundleRow) => boolean = () => true) =>
  events.filter((r) => r.environment === 'stillness' && inScope(eventCycle(r), scope, b.currentCycle) && where(r));
const inKillmails = (scope: Scope, where: (r: BundleRow) => boolean = () => true) =>
  killmails.filter((r) => r.environment === 'stillness' && inScope(cycleOfInstant(r.occurredAt), scope, b.currentCycle) && where(r));
const ids = (rows: BundleRow[]) => rows.map((r) => r.id);

const killerOf = (r: BundleRow) => actorsOf(r).killerId;
const systemOf = (r: BundleRow) => actorsOf(r).systemId;
/** NPC proof: an explicit killer type id, a killer resolved as NPC, or a sourced killer relation to an enemy. */
const npcOf = (r: BundleRow) => text(r.killerTypeId) !== undefined || text(r.killer?.typeId) !== undefined || r.killer?.isNpc === true || npcByRelation.has(r.id);

const entityName = (id: Key) => {
  const row = typeof id === 'string' ? entities.get(id) : undefined;
  return row ? (text(row.displayName) ?? text(row.name) ?? null) : null;
};

/** UTC calendar day of an instant (any offset, any fraction digits). */
const dayOf = (at: string) => new Date(Number(instantNanos(at) / 1_000_000n)).toISOString().slice(0, 10);
function bucketOf(at: string, interval: 'day' | 'week' | 'month'): string {
  const day = dayOf(at);
  if (interval === 'month') return `${day.slice(0, 7)}-01`;
  if (interval === 'day') return day;
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() - ((date.getUTCDay() + 6) % 7)); // back to Monday
  return date.toISOString().slice(0, 10);
}
/** Every bucket from the first to the last, empty ones as 0. */
function histogramOf(rows: BundleRow[], interval: 'day' | 'week' | 'month') {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(bucketOf(r.occurredAt, interval), (counts.get(bucketOf(r.occurredAt, interval)) ?? 0) + 1);
  const keys = [...counts.keys()].sort();
  const out: { key: string; label: string; count: number }[] = [];
  for (let key = keys[0]; key !== undefined && key <= keys.at(-1)!; ) {
    out.push({ key, label: key, count: counts.get(key) ?? 0 });
    const d = new Date(`${key}T00:00:00Z`);
    if (interval === 'month') d.setUTCMonth(d.getUTCMonth() + 1);
    else d.setUTCDate(d.getUTCDate() + (interval === 'week' ? 7 : 1));
    key = d.toISOString().slice(0, 10);
  }
  return out;
}

async function ok(url: string) {
  const res = await gw.get(url);
  expect(res.status, `${url}: ${res.text.slice(0, 300)}`).toBe(200);
  return res.body;
}

// ---------------------------------------------------------------------------------------------

describe('meta.count', () => {
  it('counts the rows an entity list matches, not the page, on every page of a walk', async () => {
    for (const [query, scope, where] of [
      ['', 'default', undefined],
      ['cycles=all', 'all', undefined],
      ['cycles=5&type=character|system', [5], (r: BundleRow) => ['character', 'system'].includes(r.entityType)],
    ] as [string, Scope, ((r: BundleRow) => boolean) | undefined][]) {
      const expected = expectedEntities(b, scope, where);
      const first = await ok(`/v1/entities?limit=7&${query}`);
      expect(first.meta, query).toMatchObject({ count: expected.length, countIsExact: true });
      const second = await ok(`/v1/entities?limit=7&${query}&cursor=${encodeURIComponent(first.nextCursor)}`);
      expect(second.meta.count, `${query}: page 2`).toBe(expected.length);
    }
  });

  it('counts events, killmails, sources and an entity\'s facts as the bundle has them', async () => {
    expect((await ok('/v1/events?cycles=all&limit=1')).meta).toMatchObject({ count: inEvents('all').length, countIsExact: true });
    expect((await ok('/v1/events?limit=1')).meta.count).toBe(inEvents('default').length);
    expect((await ok('/v1/killmails?npc=true&cycles=all&limit=1')).meta.count).toBe(inKillmails('all', npcOf).length);
    const sourceCount = [...sources.values()].filter((s) => s.environment === 'stillness' || s.environment === undefined).length;
    expect((await ok('/v1/sources?limit=1')).meta.count).toBe(sourceCount);
    const entity = facts[0]!.entityId;
    expect((await ok(`/v1/entities/${encodeURIComponent(entity)}/facts?limit=1`)).meta.count).toBe(facts.filter((f) => f.entityId === entity).length);
  });
});

describe('group_by', () => {
  it('groups events by kind: count descending then key, every group counted, labels are the keys', async () => {
    const rows = inEvents('all');
    const expected = groupsOf(rows, (r) => r.kind);
    const body = await ok('/v1/events?cycles=all&group_by=kind');
    expect(body.data).toEqual(expected.map((g) => ({ ...g, label: g.key })));
    expect(body.meta).toMatchObject({ count: rows.length, countIsExact: true, groupsCount: expected.length, groupsCountIsExact: true });
    expect(body.nextCursor).toBeUndefined();
  });

  it('caps the groups at limit and still says how many there are', async () => {
    const expected = groupsOf(inEvents('default'), (r) => r.kind);
    expect(expected.length).toBeGreaterThan(3);
    const body = await ok('/v1/events?group_by=kind&limit=3');
    expect(body.data.map((g: any) => [g.key, g.count])).toEqual(expected.slice(0, 3).map((g) => [g.key, g.count]));
    // Past the groups answered the number of groups is the cardinality estimate, flagged as such.
    expect(body.meta.groupsCountIsExact).toBe(false);
    expect(body.meta.groupsCount).toBe(expected.length);
  });

  it('groups killmails by system and killer, labelled with the entities\' names (null when unknown)', async () => {
    const rows = inKillmails('all');
    for (const [field, keyOf] of [
      ['system', systemOf],
      ['killer', killerOf],
    ] as const) {
      const body = await ok(`/v1/killmails?cycles=all&group_by=${field}`);
      expect(body.data, field).toEqual(groupsOf(rows, keyOf).map((g) => ({ key: g.key, label: entityName(g.key), count: g.count })));
    }
    const npc = await ok('/v1/killmails?cycles=all&group_by=npc');
    expect(npc.data).toEqual(groupsOf(rows, npcOf).map((g) => ({ ...g, label: String(g.key) })));
  });

  it('gives rows without a value one group with key null only with include_unknown=true', async () => {
    const rows = b.entities.filter((r) => r.environment === 'stillness');
    const known = groupsOf(rows, (r) => cycleOf(r.cycle));
    const all = groupsOf(rows, (r) => cycleOf(r.cycle), true);
    expect(all.some((g) => g.key === null), 'the bundle has uncycled entities').toBe(true);
    expect((await ok('/v1/entities?cycles=all&group_by=cycle')).data).toEqual(known.map((g) => ({ ...g, label: String(g.key) })));
    const withUnknown = await ok('/v1/entities?cycles=all&group_by=cycle&include_unknown=true');
    expect(withUnknown.data).toEqual(all.map((g) => ({ ...g, label: g.key === null ? null : String(g.key) })));
    expect(withUnknown.meta.groupsCount).toBe(all.length);
  });

  it("groups an entity's facts by confidence and by their source's kind", async () => {
    // The entity with the most facts whose sources the sources file does not all list.
    const byEntity = groupsOf(facts.filter((f) => !sources.has(f.sourceId)), (f) => f.entityId);
    expect(byEntity.length, 'the bundle has facts of sources listed only as entity sources').toBeGreaterThan(0);
    const entity = String(byEntity[0]!.key);
    const own = facts.filter((f) => f.entityId === entity);
    // The sources file's kind, else the kind the entities' own sources give.
    const kindOf = (f: BundleRow) => {
      const source = sources.get(f.sourceId);
      return (source ? (text(source.sourceKind) ?? text(source.kind)) : undefined) ?? entitySourceKinds.get(f.sourceId);
    };
    const url = `/v1/entities/${encodeURIComponent(entity)}/facts`;
    expect((await ok(`${url}?group_by=confidence`)).data).toEqual(groupsOf(own, (f) => f.confidence).map((g) => ({ ...g, label: g.key })));
    expect((await ok(`${url}?group_by=sourceKind&include_unknown=true`)).data).toEqual(
      groupsOf(own, kindOf, true).map((g) => ({ ...g, label: g.key === null ? null : g.key })),
    );
    const verified = own.filter((f) => f.confidence === 'verified' || f.confidence === 'probable');
    const walked = await walk(gw, `${url}?confidence=verified|probable`, 3);
    expect(walked.rows.length).toBe(verified.length);
  });

  it('refuses a field that cannot be grouped, naming it and listing those that can', async () => {
    const res = await gw.get('/v1/killmails?group_by=lossType');
    expectError(res, 400, 'bad_request', 'group_by');
    expect(res.body.error.message).toContain('lossType');
    expect(res.body.error.message).toContain('system, victim, killer, reporter, npc, label, cycle');
    expectError(await gw.get('/v1/events?group_by=kind&cursor=abc'), 400, 'bad_request', 'group_by');
  });
});

describe('histograms', () => {
  it.each(['day', 'week', 'month'] as const)('counts events per UTC %s, every empty bucket between first and last as 0', async (interval) => {
    const rows = inEvents('all');
    const body = await ok(`/v1/events?cycles=all&group_by=occurredAt:${interval}`);
    expect(body.data).toEqual(histogramOf(rows, interval));
    expect(body.meta).toMatchObject({ count: rows.length, groupsCount: body.data.length });
  });

  it('applies the filters and the range: killmails of NPCs per day in one window', async () => {
    const all = newestFirst(inKillmails('all'), (r) => r.occurredAt, (r) => r.id);
    const [since, until] = [all.at(-5)!.occurredAt, all[4]!.occurredAt];
    const rows = all.filter((r) => npcOf(r) && instantNanos(r.occurredAt) >= instantNanos(since) && instantNanos(r.occurredAt) < instantNanos(until));
    const body = await ok(`/v1/killmails?cycles=all&npc=true&since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}&group_by=occurredAt:day`);
    expect(body.data).toEqual(histogramOf(rows, 'day'));
    expect(body.data.some((g: any) => g.count === 0), 'the window has days without such kills (buckets filled with 0)').toBe(true);
  });
});

describe('since and until', () => {
  it('keeps rows with since <= occurredAt < until, compared as instants, through every page', async () => {
    const all = newestFirst(inEvents('all'), (r) => r.occurredAt, (r) => r.id);
    const since = all[Math.floor(all.length * 0.7)]!.occurredAt;
    const until = all[Math.floor(all.length * 0.2)]!.occurredAt;
    const expected = all.filter((r) => instantNanos(r.occurredAt) >= instantNanos(since) && instantNanos(r.occurredAt) < instantNanos(until));
    // The same instants written with a +02:00 offset and twelve fraction digits.
    const shifted = (at: string) => {
      const n = instantNanos(at);
      const local = new Date(Number(n / 1_000_000n) + 2 * 3_600_000).toISOString().slice(0, 19);
      return `${local}.${String(n % 1_000_000_000n).padStart(9, '0')}000+02:00`;
    };
    for (const [a, z] of [
      [since, until],
      [shifted(since), shifted(until)],
    ]) {
      const { rows } = await walk(gw, `/v1/events?cycles=all&since=${encodeURIComponent(a!)}&until=${encodeURIComponent(z!)}`, 13);
      expect(ids(rows)).toEqual(ids(expected));
    }
    const body = await ok(`/v1/events?cycles=all&since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}&limit=1`);
    expect(body.meta.count).toBe(expected.length);
  });

  it('puts an instant between two nanoseconds where it belongs: since excludes, until includes the row before it', async () => {
    const row = newestFirst(inEvents('all'), (r) => r.occurredAt, (r) => r.id)[10]!;
    const n = instantNanos(row.occurredAt);
    const justAfter = `${new Date(Number(n / 1_000_000n)).toISOString().slice(0, 19)}.${String(n % 1_000_000_000n).padStart(9, '0')}5Z`;
    const since = await ok(`/v1/events?cycles=all&since=${justAfter}&select=occurredAt&limit=200`);
    expect(since.data.every((r: any) => instantNanos(r.occurredAt) > n)).toBe(true);
    const until = await ok(`/v1/events?cycles=all&until=${justAfter}&select=occurredAt&limit=200`);
    expect(ids(until.data)).toContain(row.id);
  });

  it.each([
    ['since', '2026-06-01'],
    ['since', '2026-02-30T00:00:00Z'],
    ['until', 'yesterday'],
    ['until', '2026-06-01T25:00:00Z'],
  ])('refuses %s=%s, naming the parameter', async (name, value) => {
    expectError(await gw.get(`/v1/killmails?${name}=${encodeURIComponent(value)}`), 400, 'bad_request', name);
  });
});

describe('OR lists', () => {
  it('matches any of several values separated by |', async () => {
    const kinds = groupsOf(inEvents('all'), (r) => r.kind).slice(0, 2).map((g) => g.key as string);
    const expected = newestFirst(inEvents('all', (r) => kinds.includes(r.kind)), (r) => r.occurredAt, (r) => r.id);
    const { rows } = await walk(gw, `/v1/events?cycles=all&kind=${encodeURIComponent(kinds.join('|'))}`, 50);
    expect(ids(rows)).toEqual(ids(expected));
  });

  it.each(['kind=a|', 'kind=|a', 'kind=a|%20|b'])('refuses an empty member: %s', async (query) => {
    expectError(await gw.get(`/v1/events?${query}`), 400, 'bad_request', 'kind');
  });
});

describe('sort', () => {
  it('reads events oldest first with sort=occurredAt:asc, ties by id ascending', async () => {
    const expected = newestFirst(inEvents('all'), (r) => r.occurredAt, (r) => r.id).reverse();
    const { rows } = await walk(gw, '/v1/events?cycles=all&sort=occurredAt:asc', 97);
    expect(ids(rows)).toEqual(ids(expected));
  });

  it('reads entities most recently updated first, rows without updatedAt last, ties by id', async () => {
    const at = (r: BundleRow) => (text(r.updatedAt) ? instantNanos(r.updatedAt) : 0n);
    const rows = b.entities.filter((r) => r.environment === 'stillness');
    expect(new Set(rows.map((r) => r.updatedAt)).size, 'the bundle has distinct update times').toBeGreaterThan(10);
    const expected = [...rows].sort((x, y) => (at(y) > at(x) ? 1 : at(y) < at(x) ? -1 : byteCompare(x.id, y.id)));
    const { rows: walked } = await walk(gw, '/v1/entities?cycles=all&sort=updatedAt:desc', 31);
    expect(ids(walked)).toEqual(ids(expected));
  });

  it('keeps the default order for the default sort, and binds cursors to the sort', async () => {
    const plain = await ok('/v1/events?limit=5');
    const explicit = await ok('/v1/events?limit=5&sort=occurredAt:desc');
    expect(explicit.data).toEqual(plain.data);
    const next = await gw.get(`/v1/events?limit=5&sort=occurredAt:desc&cursor=${encodeURIComponent(plain.nextCursor)}`);
    expect(next.status).toBe(200);
    expectError(await gw.get(`/v1/events?limit=5&sort=occurredAt:asc&cursor=${encodeURIComponent(plain.nextCursor)}`), 400, 'bad_request', 'cursor');
    expectError(await gw.get('/v1/entities?sort=relevance'), 400, 'bad_request', 'sort');
    const byLabel = await ok('/v1/entities?q=a&sort=label:asc&limit=200&cycles=all');
    const labels = byLabel.data.map(entityLabel);
    expect(labels).toEqual([...labels].sort(byteCompare));
  });
});

describe('select', () => {
  it('keeps id and the selected top-level fields of each row', async () => {
    const expected = newestFirst(inEvents('default'), (r) => r.occurredAt, (r) => r.id).slice(0, 20);
    const body = await ok('/v1/events?limit=20&select=kind,occurredAt');
    expect(body.data).toEqual(expected.map((r) => ({ id: r.id, kind: r.kind, occurredAt: r.occurredAt })));
    const current = await ok('/v1/current/systems?limit=3&select=derived');
    expect(current.data.every((r: any) => Object.keys(r).every((k) => k === 'derived'))).toBe(true);
  });

  it('refuses a field the records never have, naming it', async () => {
    const res = await gw.get('/v1/events?select=kind,nonsense');
    expectError(res, 400, 'bad_request', 'select');
    expect(res.body.error.message).toContain('nonsense');
    expectError(await gw.get('/v1/events?select=kind&group_by=kind'), 400, 'bad_request', 'select');
  });
});

describe('/v1/autocomplete', () => {
  const stillness = () => b.entities.filter((r) => r.environment === 'stillness');
  const namesOf = (r: BundleRow) => [text(r.name), text(r.displayName)].filter((n): n is string => n !== undefined).map(fold);

  it('puts the only entity whose name starts with the text first', async () => {
    const candidates = stillness().filter((r) => !/\d/.test(entityLabel(r)));
    let tried = 0;
    for (const row of candidates) {
      const prefix = Array.from(namesOf(row)[0]!).slice(0, 6).join('');
      if (prefix.length < 4 || stillness().filter((o) => namesOf(o).some((n) => n.startsWith(prefix))).length !== 1) continue;
      const body = await ok(`/v1/autocomplete?cycles=all&q=${encodeURIComponent(prefix)}`);
      expect(body.data[0], prefix).toMatchObject({ id: row.id, slug: row.slug, entityType: row.entityType, label: text(row.displayName) ?? text(row.name) });
      if (++tried === 10) break;
    }
    expect(tried, 'the bundle has names with a unique prefix').toBeGreaterThan(3);
  });

  it('answers an exact id or slug first', async () => {
    const row = stillness()[3]!;
    for (const q of [row.id, row.slug]) expect((await ok(`/v1/autocomplete?cycles=all&q=${encodeURIComponent(q)}`)).data[0].id).toBe(row.id);
  });

  it('matches every complete word, the last one as a prefix, and forgives one typo in words of four letters or more', async () => {
    const row = stillness().find((r) => /^[a-z]{5,} [a-z]{3,}$/i.test(text(r.name) ?? ''))!;
    expect(row, 'the bundle has two-word names').toBeDefined();
    const [first, second] = row.name.split(' ') as [string, string];
    const typo = `${first.slice(0, 2)}${first[3]}${first[2]}${first.slice(4)}`; // two letters swapped
    for (const q of [`${first} ${second.slice(0, 2)}`, `${typo} ${second}`]) {
      const body = await ok(`/v1/autocomplete?cycles=all&q=${encodeURIComponent(q)}`);
      expect(ids(body.data), q).toContain(row.id);
      expect(body.data.length).toBeLessThanOrEqual(10);
    }
    // A short word is matched exactly: no typo in words under four letters.
    const short = await ok(`/v1/autocomplete?cycles=all&q=${encodeURIComponent(`${first} ${second.slice(0, 2)}zzq`)}`);
    expect(ids(short.data)).not.toContain(row.id);
    // Without text: no suggestions.
    expect((await ok('/v1/autocomplete')).data).toEqual([]);
  });

  it('answers no suggestions, not an error, to text that nothing matches', async () => {
    // Elasticsearch's filtered answers then leave out `hits` and `suggest` altogether.
    const q = 'xqzjxqzj';
    const near = b.entities.filter((r) => [r.id, r.slug, r.name, r.displayName].some((v) => typeof v === 'string' && /xqz|qzj/i.test(v)));
    expect(near, 'nothing in the bundle is near the text').toEqual([]);
    expect((await ok(`/v1/autocomplete?cycles=all&q=${q}`)).data).toEqual([]);
  });

  it('is scoped and typed like search', async () => {
    const body = await ok('/v1/autocomplete?q=a&type=system&cycles=all');
    expect(body.data.length).toBeGreaterThan(0);
    expect(body.data.every((s: any) => s.entityType === 'system' && entities.get(s.id)?.environment === 'stillness')).toBe(true);
  });
});
