/**
 * What client developers build on, against a real Elasticsearch, every expectation computed
 * from the bundle files: many records in one call (`id=a|b|…`: found, missing, repeated and
 * over-cap ids; ids or slugs on entity lists; with `select`), and killmails by involvement
 * (`involved`, `side`) for characters that were a victim, a killer and a reporter, NPC and
 * raw-killer-id rows included, walked through cursors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleRow, readAllRows } from '../../generator/read-bundle.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { byteCompare, expectError, lastWins, newestFirst, walk } from '../support/expect.ts';

let gw: TestGateway;
let entities: BundleRow[];
let killmails: BundleRow[];
let events: BundleRow[];

beforeAll(async () => {
  gw = await startTestGateway({ name: 'batch', scale: 3, seed: 57 });
  entities = lastWins(await readAllRows(gw.bundleDir, 'entities.jsonl'), (r) => r.id);
  killmails = lastWins(await readAllRows(gw.bundleDir, 'killmails.jsonl'), (r) => r.id);
  events = lastWins(await readAllRows(gw.bundleDir, 'events.jsonl'), (r) => r.id);
}, 300_000);

afterAll(() => gw?.close());

const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

describe('many records in one call', () => {
  it('answers the entities asked for by id or slug, once each, in the list order, and lists the missing', async () => {
    const picked = entities.filter((r) => r.environment === 'stillness' && r.cycle === undefined).slice(0, 5);
    const asked = [picked[0]!.id, picked[1]!.slug, picked[2]!.id, picked[0]!.id, 'character:stillness:nobody', picked[3]!.id, picked[4]!.slug];
    const res = await gw.get(`/v1/entities?id=${encodeURIComponent(asked.join('|'))}`);
    expect(res.status).toBe(200);
    const label = (r: BundleRow) => String(r.displayName ?? r.name ?? r.id).toLowerCase();
    const expected = [...picked].sort((a, b) => byteCompare(label(a), label(b)) || byteCompare(a.id, b.id)).map((r) => r.id);
    expect(ids(res.body.data)).toEqual(expected);
    expect(res.body.meta.missing).toEqual(['character:stillness:nobody']);
    expect(res.body.meta.count).toBe(5);
  });

  it('combines with select and the other filters (AND): an id filtered out is missing', async () => {
    const system = entities.find((r) => r.environment === 'stillness' && r.entityType === 'system' && r.cycle === undefined)!;
    const character = entities.find((r) => r.environment === 'stillness' && r.entityType === 'character' && r.cycle === undefined)!;
    const res = await gw.get(`/v1/entities?type=system&select=name&id=${encodeURIComponent(`${system.id}|${character.id}`)}`);
    expect(res.body.data).toEqual([{ id: system.id, name: system.name }]);
    expect(res.body.meta.missing).toEqual([character.id]);
  });

  it('answers events, killmails and sources by id', async () => {
    for (const [route, rows] of [['events', events], ['killmails', killmails]] as const) {
      const picked = rows.filter((r) => r.environment === 'stillness').slice(0, 7);
      const res = await gw.get(`/v1/${route}?cycles=all&id=${encodeURIComponent([...picked.map((r) => r.id), 'nope'].join('|'))}`);
      expect(ids(res.body.data), route).toEqual(newestFirst(picked, (r) => r.occurredAt, (r) => r.id).map((r) => r.id));
      expect(res.body.meta.missing).toEqual(['nope']);
    }
    const sources = lastWins(await readAllRows(gw.bundleDir, 'sources.jsonl'), (r) => r.id).filter((r) => r.environment === 'stillness' || r.environment === undefined);
    const res = await gw.get(`/v1/sources?id=${encodeURIComponent(sources.slice(0, 2).map((r) => r.id).join('|'))}`);
    expect(new Set(ids(res.body.data))).toEqual(new Set(sources.slice(0, 2).map((r) => r.id)));
  });

  it('refuses more than 100 ids, naming id and the cap', async () => {
    const many = Array.from({ length: 101 }, (_, i) => `x${i}`).join('|');
    const res = await gw.get(`/v1/entities?id=${many}`);
    expectError(res, 400, 'bad_request', 'id');
    expect(res.body.error.message).toMatch(/at most 100/);
    expect((await gw.get(`/v1/entities?id=${Array.from({ length: 100 }, (_, i) => `x${i}`).join('|')}`)).status).toBe(200);
  });
});

describe('killmails by involvement', () => {
  const victimOf = (r: BundleRow) => r.victimCharacterId ?? r.victim?.entityId ?? r.victim?.rawId;
  const reporterOf = (r: BundleRow) => r.reporterCharacterId ?? r.reporter?.entityId ?? r.reporter?.rawId;
  /** Every id a kill names its killer by: character id, NPC type id, resolved entity id. */
  const killersOf = (r: BundleRow) =>
    [r.killerCharacterId, r.killerTypeId, r.killer?.typeId, r.killer?.entityId, r.killer?.entityType === 'character' ? r.killer?.rawId : undefined].filter(Boolean);
  const newest = (rows: BundleRow[]) => newestFirst(rows, (r) => r.occurredAt, (r) => r.id).map((r) => r.id);

  /** A character that was the victim of one kill, a killer in another and the reporter of a third, if the bundle has one; else the most involved. */
  function busiest(): string {
    const roles = new Map<string, Set<string>>();
    const add = (id: unknown, role: string) => typeof id === 'string' && roles.set(id, (roles.get(id) ?? new Set()).add(role));
    for (const r of killmails) {
      add(victimOf(r), 'victim');
      for (const k of killersOf(r)) add(k, 'killer');
      add(reporterOf(r), 'reporter');
    }
    return [...roles].sort((a, b) => b[1].size - a[1].size || byteCompare(a[0], b[0]))[0]![0];
  }

  it('matches a kill where the entity was the victim, a killer or the reporter, walked through cursors', async () => {
    const who = busiest();
    const expected = newest(killmails.filter((r) => r.environment === 'stillness' && (victimOf(r) === who || killersOf(r).includes(who) || reporterOf(r) === who)));
    expect(expected.length).toBeGreaterThan(1);
    const { rows, pages } = await walk(gw, `/v1/killmails?cycles=all&involved=${encodeURIComponent(who)}`, 1);
    expect(ids(rows)).toEqual(expected);
    expect(pages).toBe(expected.length);
  });

  it('narrows to kills or losses', async () => {
    const who = busiest();
    const kills = newest(killmails.filter((r) => r.environment === 'stillness' && killersOf(r).includes(who)));
    const losses = newest(killmails.filter((r) => r.environment === 'stillness' && victimOf(r) === who));
    expect(ids((await walk(gw, `/v1/killmails?cycles=all&involved=${encodeURIComponent(who)}&side=kills`, 2)).rows)).toEqual(kills);
    expect(ids((await walk(gw, `/v1/killmails?cycles=all&involved=${encodeURIComponent(who)}&side=losses`, 2)).rows)).toEqual(losses);
  });

  it('finds NPC kills by the NPC type id, and raw killer ids', async () => {
    const npc = killmails.find((r) => r.environment === 'stillness' && (r.killerTypeId || r.killer?.typeId))!;
    const typeId = npc.killerTypeId ?? npc.killer.typeId;
    const expected = newest(killmails.filter((r) => r.environment === 'stillness' && killersOf(r).includes(typeId)));
    expect(ids((await walk(gw, `/v1/killmails?cycles=all&involved=${typeId}&side=kills`, 50)).rows)).toEqual(expected);
  });

  it('combines with group_by and several ids, and refuses side without involved', async () => {
    const who = busiest();
    const groups = (await gw.get(`/v1/killmails?cycles=all&involved=${encodeURIComponent(who)}&group_by=system`)).body;
    const expected = killmails.filter((r) => r.environment === 'stillness' && (victimOf(r) === who || killersOf(r).includes(who) || reporterOf(r) === who));
    expect(groups.meta.count).toBe(expected.length);
    expectError(await gw.get('/v1/killmails?side=kills'), 400, 'bad_request', 'side');
  });
});
