/**
 * Groups exact on several shards: every index of the bundle loaded into three primary shards
 * (`ES_MIN_SHARDS=3`), where a plain `terms` aggregation undercounts a top group or leaves one
 * out. Every `group_by` field of killmails and events, top 10 and top 200, and facets of the
 * high-cardinality fields, and the top lists of an activity, equal the counts and order computed
 * here from the bundle files, and the answers say they are exact.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type BundleRow, readAllRows } from '../../generator/read-bundle.ts';
import { createClient } from '../../src/search/client.ts';
import { cycleOf, cycleOfInstant, lastWins, relationKey } from '../support/expect.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { type Key, groupsOf } from '../support/groups.ts';
import { actorsOf, expectedLabels, text, tribesOf } from '../support/killmail-labels.ts';

const SHARDS = 3;
let gw: TestGateway;
let killmails: BundleRow[];
let events: BundleRow[];
let labels: Map<string, string[]>;
let tribes: Map<string, Set<string>>;

beforeAll(async () => {
  gw = await startTestGateway({ name: 'shards', scale: 100, eventsPerEntity: 1, seed: 56, env: { ES_MIN_SHARDS: String(SHARDS) } });
  killmails = lastWins(await readAllRows(gw.bundleDir, 'killmails.jsonl'), (r) => r.id).filter((r) => r.environment === 'stillness');
  events = lastWins(await readAllRows(gw.bundleDir, 'events.jsonl'), (r) => r.id).filter((r) => r.environment === 'stillness');
  const relations = lastWins(await readAllRows(gw.bundleDir, 'relations.jsonl'), relationKey);
  labels = expectedLabels(killmails, relations);
  tribes = tribesOf(relations);
}, 300_000);

afterAll(() => gw?.close());

/** Rows that hold several keys (labels) count once in each of their groups. */
const each = <T>(rows: T[], keysOf: (row: T) => Key[]) => rows.flatMap((row) => keysOf(row).map((key) => ({ key })));
const reporterOf = (r: BundleRow) => text(r.reporterCharacterId) ?? text(r.reporter?.entityId) ?? text(r.reporter?.rawId);

const KILLMAIL_GROUPS: [string, (rows: BundleRow[]) => { key: Key }[]][] = [
  ['system', (rows) => rows.map((r) => ({ key: actorsOf(r).systemId ?? null }))],
  ['victim', (rows) => rows.map((r) => ({ key: actorsOf(r).victimId ?? null }))],
  ['killer', (rows) => rows.map((r) => ({ key: actorsOf(r).killerId ?? null }))],
  ['reporter', (rows) => rows.map((r) => ({ key: reporterOf(r) ?? null }))],
  ['label', (rows) => each(rows, (r) => labels.get(r.id) ?? [])],
  ['cycle', (rows) => rows.map((r) => ({ key: cycleOfInstant(r.occurredAt) ?? null }))],
];
const EVENT_GROUPS: [string, (rows: BundleRow[]) => { key: Key }[]][] = [
  ['kind', (rows) => rows.map((r) => ({ key: text(r.kind) ?? null }))],
  ['module', (rows) => rows.map((r) => ({ key: text(r.module) ?? null }))],
  ['package_id', (rows) => rows.map((r) => ({ key: text(r.packageId) ?? null }))],
  ['source_id', (rows) => rows.map((r) => ({ key: text(r.sourceId) ?? null }))],
  ['cycle', (rows) => rows.map((r) => ({ key: cycleOf(r.cycle) ?? cycleOfInstant(r.occurredAt) ?? null }))],
];

async function grouped(path: string) {
  const res = await gw.get(path);
  expect(res.status, `${path}: ${res.text.slice(0, 300)}`).toBe(200);
  return res.body;
}

describe(`group_by over ${SHARDS} primary shards`, () => {
  it('loads every index with that many primary shards', async () => {
    const client = createClient(inject('esUrl'));
    const settings = await client.indices.getSettings({ index: `${gw.prefix}-*`, name: 'index.number_of_shards' });
    // The generation's indices; the changes record, the generation documents, the bundle record and the loader's state are the loader's own.
    const counts = Object.entries(settings).filter(([name]) => !/-(changes-[a-z_]+-[0-9a-f]+|state|bundles|meta-\d+-[0-9a-f]+)$/.test(name)).map(([, s]) => Number(s.settings?.index?.number_of_shards));
    expect(counts.length).toBeGreaterThan(5);
    expect(new Set(counts)).toEqual(new Set([SHARDS]));
    await client.close();
  });

  it.each([
    ['killmails', KILLMAIL_GROUPS],
    ['events', EVENT_GROUPS],
  ] as const)('answers every %s group_by field, top 10 and top 200, as the files count them', async (route, fields) => {
    const rows = route === 'killmails' ? killmails : events;
    for (const [field, keysOf] of fields) {
      const all = groupsOf(keysOf(rows), (r) => r.key, false, Infinity);
      for (const limit of [10, 200]) {
        const body = await grouped(`/v1/${route}?cycles=all&group_by=${field}&limit=${limit}`);
        expect(body.data.map((g: { key: Key; count: number }) => ({ key: g.key, count: g.count })), `${field}, limit ${limit}`).toEqual(all.slice(0, limit));
        // Past the groups answered, groupsCount is the cardinality estimate: at these sizes, the count.
        expect(body.meta, `${field}, limit ${limit}`).toMatchObject({ groupsAreExact: true, groupsCount: all.length });
        expect(body.meta.groupsErrorBound).toBeUndefined();
      }
    }
  });

  it('has fields whose groups a plain terms aggregation over these shards would miscount', () => {
    // Many groups of a few rows each: each shard's top is not the whole's.
    const victims = groupsOf(KILLMAIL_GROUPS[1]![1](killmails), (r) => r.key, false, Infinity);
    expect(victims.length).toBeGreaterThan(SHARDS * 310);
    expect(victims[9]!.count).toBeLessThan(10);
  });

  it('counts facets of high-cardinality fields exactly, each under the other filters', async () => {
    const killer = actorsOf(killmails[0]!).killerId!;
    const body = await grouped(`/v1/killmails?cycles=all&killer=${encodeURIComponent(killer)}&group_by=victim,killer,system&limit=10`);
    const killedBy = killmails.filter((r) => actorsOf(r).killerIds.includes(killer));
    expect(body.data.victim).toHaveLength(Math.min(10, groupsOf(killedBy, (r) => actorsOf(r).victimId).length));
    expect(body.data.victim.map((g: { key: Key; count: number }) => ({ key: g.key, count: g.count }))).toEqual(groupsOf(killedBy, (r) => actorsOf(r).victimId, false, 10));
    expect(body.data.system.map((g: { key: Key; count: number }) => ({ key: g.key, count: g.count }))).toEqual(groupsOf(killedBy, (r) => actorsOf(r).systemId, false, 10));
    // killer's own facet is counted without killer=: over every killmail.
    expect(body.data.killer.map((g: { key: Key; count: number }) => ({ key: g.key, count: g.count }))).toEqual(groupsOf(killmails, (r) => actorsOf(r).killerId, false, 10));
    for (const facet of ['victim', 'killer', 'system']) expect(body.meta.facets[facet].groupsAreExact, facet).toBe(true);
  });

  it("answers a tribe's activity, whose kills span more systems than a shard sends at first, exactly", async () => {
    const killerTribes = (r: BundleRow) => new Set(actorsOf(r).killerCharacters.flatMap((c) => [...(tribes.get(c) ?? [])]));
    const kills = new Map<string, BundleRow[]>();
    for (const r of killmails) for (const tribe of killerTribes(r)) kills.set(tribe, [...(kills.get(tribe) ?? []), r]);
    const [tribe, rows] = [...kills].sort((a, b) => b[1].length - a[1].length)[0]!;
    const systems = groupsOf(rows, (r) => actorsOf(r).systemId, false, Infinity);
    // Each shard holds more of its systems than the 26 it sends for a top 10 of mostly single kills.
    expect(systems.length).toBeGreaterThan(SHARDS * 26 * 1.2);
    const body = await grouped(`/v1/entities/${encodeURIComponent(tribe)}/activity?cycles=all`);
    expect(body.data.kills.count).toBe(rows.length);
    expect(body.data.kills.systems).toEqual(systems.slice(0, 10).map((g) => ({ id: g.key, count: g.count })));
    expect(body.data.exact).toBe(true);
  });
});
