/**
 * `/v1/battles` and `/v1/battles/{id}` against a real Elasticsearch. The generated
 * bundle's next export adds killmails that form known battles — a chain of kills just under the
 * gap then just over it, a three-tribe fight with an NPC kill and a character without a tribe,
 * a lone kill — and every answer is compared with a computation over the export's files
 * (test/support/battles.ts), at several gaps, through filters and pages.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeNextExport } from '../../generator/next-export.ts';
import { type BundleRow, readAllRows } from '../../generator/read-bundle.ts';
import { type ExpectedBattle, expectedBattles } from '../support/battles.ts';
import { lastWins } from '../support/expect.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { tribesOf } from '../support/killmail-labels.ts';

let gw: TestGateway;
let killmails: BundleRow[];
let relations: BundleRow[];
/** The three tribes of the fight, and the chain's system. */
let fight: { tribes: string[]; system: string; chainSystem: string; loneSystem: string; loner: string };
const MIN = 60_000;

function killmail(id: string, ms: number, system: string, victim: string, killer: { character?: string; typeId?: string }, template: BundleRow): BundleRow {
  return {
    id: `killmail:stillness:${id}`,
    environment: 'stillness',
    occurredAt: new Date(ms).toISOString(),
    systemId: system,
    victimCharacterId: victim,
    ...(killer.character ? { killerCharacterId: killer.character } : { killerTypeId: killer.typeId }),
    lossType: 'Ship',
    sourceIds: template.sourceIds,
    kind: 'killmail',
  };
}

beforeAll(async () => {
  gw = await startTestGateway({ name: 'battles', scale: 3, seed: 48 });
  const base = await readAllRows(gw.bundleDir, 'killmails.jsonl');
  relations = await readAllRows(gw.bundleDir, 'relations.jsonl');
  const entities = await readAllRows(gw.bundleDir, 'entities.jsonl');
  const tribes = tribesOf(relations);
  const stillness = (type: string) => entities.filter((e) => e.entityType === type && e.environment === 'stillness').map((e) => String(e.id));
  // Characters of exactly one tribe, by tribe; three tribes with two members each.
  const members = new Map<string, string[]>();
  for (const character of stillness('character')) {
    const of = tribes.get(character);
    if (of?.size === 1) members.set([...of][0]!, [...(members.get([...of][0]!) ?? []), character]);
  }
  const [t1, t2, t3] = [...members].filter(([, m]) => m.length >= 2).map(([t]) => t).sort();
  if (!t3) throw new Error('the generated bundle has fewer than three tribes of two members');
  const loner = stillness('character').find((c) => !tribes.has(c))!;
  const [chainSystem, system, loneSystem] = stillness('system');
  fight = { tribes: [t1!, t2!, t3], system: system!, chainSystem: chainSystem!, loneSystem: loneSystem!, loner };
  const [a1, a2] = members.get(t1!)!;
  const [b1, b2] = members.get(t2!)!;
  const [c1, c2] = members.get(t3)!;
  const template = base[0]!;
  const npcType = String(base.find((r) => r.killerTypeId)?.killerTypeId ?? '94403');
  const t0 = Math.max(...base.map((r) => Date.parse(String(r.occurredAt)))) + 24 * 60 * MIN;
  const added: BundleRow[] = [];
  // The chain: 14:59 apart twice (one battle at 15), then 15:01 (a new one), then 5:00.
  const chain = [0, 14 * MIN + 59_000, 29 * MIN + 58_000, 44 * MIN + 59_000, 49 * MIN + 59_000];
  chain.forEach((at, i) => added.push(killmail(`900${i}`, t0 + at, chainSystem!, i % 2 ? a1! : b1!, { character: i % 2 ? b2! : a2! }, template)));
  // The fight, two minutes apart: t1 kills t2 ×3, t2 kills t1 ×2, t3 kills t2 ×2, t1 kills t3, an NPC kills t3, the loner kills t1.
  const blows: [string, { character?: string; typeId?: string }][] = [
    [b1!, { character: a1 }],
    [b2!, { character: a2 }],
    [b1!, { character: a2 }],
    [a1!, { character: b1 }],
    [a2!, { character: b2 }],
    [b1!, { character: c1 }],
    [b2!, { character: c2 }],
    [c1!, { character: a1 }],
    [c2!, { typeId: npcType }],
    [a1!, { character: loner }],
  ];
  blows.forEach(([victim, killer], i) => added.push(killmail(`910${i}`, t0 + 3 * 60 * MIN + i * 2 * MIN, system!, victim, killer, template)));
  added.push(killmail('9200', t0, loneSystem!, a1!, { character: b1 }, template));
  const next = path.join(await mkdtemp(path.join(tmpdir(), 'battles-')), 'next');
  await writeNextExport(gw.bundleDir, next, {
    killmails: async function* (rows) {
      yield* added.toReversed();
      yield* rows;
    },
  });
  await gw.loadNext(next);
  killmails = lastWins(await readAllRows(next, 'killmails.jsonl'), (r) => r.id);
}, 300_000);

afterAll(() => gw?.close());

async function battles(query: string): Promise<any[]> {
  const all: any[] = [];
  let cursor: string | undefined;
  do {
    const res = await gw.get(`/v1/battles?cycles=all&${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status, JSON.stringify(res.body?.error)).toBe(200);
    all.push(...res.body.data);
    cursor = res.body.nextCursor;
  } while (cursor);
  return all;
}

/** What the API answers of a battle, in the expectation's terms. */
function shape(b: any) {
  return {
    id: b.id,
    systemId: b.systemId,
    startedAt: Date.parse(b.startedAt),
    endedAt: Date.parse(b.endedAt),
    killCount: b.killCount,
    sides: b.sides.map((s: any) => ({ side: s.side, characters: s.characters.map((c: any) => c.id), tribes: s.tribes.map((t: any) => t.id), kills: s.kills, losses: s.losses })),
  };
}

function expectedShape(e: ExpectedBattle) {
  return {
    id: e.id,
    systemId: e.systemId,
    startedAt: e.startedAt,
    endedAt: e.endedAt,
    killCount: e.killIds.length,
    sides: e.sides.map(({ side, characters, tribes, kills, losses }) => ({ side, characters, tribes, kills, losses })),
  };
}

describe('/v1/battles', () => {
  it.each([15, 16, 5, 60])('lists every battle of the files at gap %i, newest first, over pages', async (gap) => {
    const expected = expectedBattles(killmails, relations, gap);
    expect(expected.length).toBeGreaterThan(0);
    const got = await battles(`gap=${gap}&limit=2`);
    expect(got.map(shape)).toEqual(expected.map(expectedShape));
  });

  it('cuts the chain where the gap is passed: 14:59 joins, 15:01 does not', async () => {
    const chain = (gap: number) => expectedBattles(killmails, relations, gap).filter((b) => b.systemId === fight.chainSystem).map((b) => b.killIds.length);
    expect(chain(15)).toEqual([2, 3]);
    expect(chain(16)).toEqual([5]);
    expect(chain(5)).toEqual([2]);
    for (const gap of [15, 16, 5]) {
      const got = await battles(`gap=${gap}&system=${encodeURIComponent(fight.chainSystem)}`);
      expect(got.map((b) => b.killCount)).toEqual(chain(gap));
    }
  });

  it('splits the three-tribe fight into the sides that fought each other, NPCs apart', async () => {
    const [got] = await battles(`system=${encodeURIComponent(fight.system)}`);
    const [t1, t2, t3] = fight.tribes;
    const groups = got.sides.map((s: any) => [...s.tribes.map((t: any) => t.id), ...s.characters.filter((c: any) => c.id === fight.loner).map((c: any) => c.id)].sort());
    // t1 and t2 fought most (5 kills): apart; t3 fought t2 more (2) than t1 (1): with t1; the loner fought t1.
    expect(groups.slice(0, 2).sort()).toEqual([[t1, t3].sort(), [t2, fight.loner].sort()].sort());
    expect(got.sides.map((s: any) => s.side)).toEqual(['a', 'b', 'npc']);
    expect(got.sides[2]).toMatchObject({ kills: 1, losses: 0, tribes: [], characters: [] });
    const t1Side = got.sides.find((s: any) => s.tribes.some((t: any) => t.id === t1));
    expect([t1Side.kills, t1Side.losses]).toEqual([6, 5]);
    expect(got.killCount).toBe(10);
  });

  it('involved keeps the battles an entity or its tribe took part in, at each gap, counted', async () => {
    const chainVictim = killmails.find((k) => k.id === 'killmail:stillness:9001')!.victimCharacterId as string;
    for (const gap of [5, 15, 16]) {
      for (const id of [fight.tribes[2]!, fight.loner, chainVictim]) {
        const expected = expectedBattles(killmails, relations, gap).filter((b) => b.sides.some((s) => s.characters.includes(id) || s.tribes.includes(id)));
        const first = await gw.get(`/v1/battles?cycles=all&gap=${gap}&involved=${encodeURIComponent(id)}&limit=1`);
        expect(first.body.meta.count, `${id} at ${gap}`).toBe(expected.length);
        expect((await battles(`gap=${gap}&involved=${encodeURIComponent(id)}&limit=1`)).map((b) => b.id), `${id} at ${gap}`).toEqual(expected.map((b) => b.id));
      }
    }
  });

  it('answers every battle as a file (ndjson and csv)', async () => {
    const expected = expectedBattles(killmails, relations, 15);
    const ndjson = await gw.get('/v1/battles?cycles=all&format=ndjson');
    expect(ndjson.status).toBe(200);
    const rows = ndjson.text.trim().split('\n').map((line) => JSON.parse(line));
    expect(rows.map(shape)).toEqual(expected.map(expectedShape));
    expect(ndjson.headers.get('x-total-count')).toBe(String(expected.length));
    const csv = await gw.get('/v1/battles?cycles=all&format=csv&select=killCount');
    expect(csv.text.trim().split('\r\n')).toEqual(['id,killCount', ...expected.map((b) => `${b.id},${b.killIds.length}`)]);
  });

  it('since, until and sort=startedAt:asc', async () => {
    const expected = expectedBattles(killmails, relations, 15);
    const middle = expected[Math.floor(expected.length / 2)]!;
    const since = new Date(middle.startedAt).toISOString();
    expect((await battles(`since=${since}`)).map((b) => b.id)).toEqual(expected.filter((b) => b.startedAt >= middle.startedAt).map((b) => b.id));
    expect((await battles(`until=${since}`)).map((b) => b.id)).toEqual(expected.filter((b) => b.startedAt < middle.startedAt).map((b) => b.id));
    expect((await battles('sort=startedAt:asc&limit=1')).map((b) => b.id)).toEqual(expected.map((b) => b.id).toReversed());
  });

  it('answers its count on the first page', async () => {
    const res = await gw.get('/v1/battles?cycles=all&limit=1');
    expect(res.body.meta.count).toBe(expectedBattles(killmails, relations, 15).length);
  });

  it('refuses a gap out of range, a range upside down, a bad sort', async () => {
    for (const [query, parameter] of [
      ['gap=4', 'gap'],
      ['gap=61', 'gap'],
      ['gap=ten', 'gap'],
      ['since=2026-07-02T00:00:00Z&until=2026-07-01T00:00:00Z', 'until'],
      ['sort=kills', 'sort'],
    ]) {
      const res = await gw.get(`/v1/battles?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.details?.parameter, query).toBe(parameter);
    }
  });
});

describe('/v1/battles/{id}', () => {
  it('answers the battle and its killmails, oldest first', async () => {
    const expected = expectedBattles(killmails, relations, 15).find((b) => b.systemId === fight.system)!;
    const res = await gw.get(`/v1/battles/${encodeURIComponent(expected.id)}`);
    expect(res.status).toBe(200);
    expect(shape(res.body.data.battle)).toEqual(expectedShape(expected));
    expect(res.body.data.killmails.map((k: any) => k.id)).toEqual(expected.killIds);
    expect(res.body.data.killmails[0].labels).toBeDefined();
    expect(res.body.data.killmailsTruncated).toBe(false);
    const listed = await gw.get(res.body.data.killmailsHref);
    expect(listed.body.data.map((k: any) => k.id)).toEqual(expected.killIds);
  });

  it('takes gap=, and names the battle a killmail is in when it does not start one', async () => {
    const [first, second] = expectedBattles(killmails, relations, 16).filter((b) => b.systemId === fight.chainSystem)[0]!.killIds;
    expect((await gw.get(`/v1/battles/${encodeURIComponent(first!)}?gap=16`)).body.data.battle.killCount).toBe(5);
    const inside = await gw.get(`/v1/battles/${encodeURIComponent(second!)}?gap=16`);
    expect(inside.status).toBe(404);
    expect(inside.body.error.message).toContain(first);
    expect((await gw.get('/v1/battles/killmail:stillness:9200')).status).toBe(404);
    expect((await gw.get('/v1/battles/nothing-at-all')).status).toBe(404);
    expect((await gw.get(`/v1/battles/${encodeURIComponent(first!)}?gap=70`)).status).toBe(400);
  });
});
