/**
 * `/v1/entities/{idOrSlug}/activity` against a real Elasticsearch: for the busiest
 * character, tribe and system of a bundle, every count, loss type, top list and the 7 × 24 grid
 * equal a computation over the bundle files (killmails, and the `belongs_to` relations for
 * tribes), in one request to Elasticsearch; another entity type is a 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleRow, readAllRows } from '../../generator/read-bundle.ts';
import { lastWins } from '../support/expect.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { actorsOf, expectedLabels, gridOf, text, tribesOf } from '../support/killmail-labels.ts';

let gw: TestGateway;
let killmails: BundleRow[];
let entities: BundleRow[];
let tribes: Map<string, Set<string>>;
let npc: Map<string, string[]>;

beforeAll(async () => {
  gw = await startTestGateway({ name: 'activity', scale: 3, seed: 49 });
  killmails = lastWins(await readAllRows(gw.bundleDir, 'killmails.jsonl'), (r) => r.id).filter((r) => r.environment === 'stillness');
  entities = await readAllRows(gw.bundleDir, 'entities.jsonl');
  const relations = await readAllRows(gw.bundleDir, 'relations.jsonl');
  tribes = tribesOf(relations);
  npc = expectedLabels(killmails, relations);
}, 300_000);

afterAll(() => gw?.close());

type Counted = { id: string; count: number }[];

/** The top ten of a count, as Elasticsearch's terms order them: count descending, then key. */
function top(ids: (string | undefined)[][], self: string): Counted {
  const counts = new Map<string, number>();
  for (const list of ids) for (const id of new Set(list)) if (id !== undefined) counts.set(id, (counts.get(id) ?? 0) + 1);
  return [...counts]
    .map(([id, count]) => ({ id, count }))
    .sort((a, b) => b.count - a.count || (a.id < b.id ? -1 : 1))
    .filter((c) => c.id !== self)
    .slice(0, 10);
}

/** One side as the files give it. */
function side(rows: BundleRow[], tops: Record<string, (row: BundleRow) => (string | undefined)[]>, self: string) {
  const grid = gridOf(rows);
  const lossTypes = new Map<string, number>();
  for (const row of rows) if (text(row.lossType)) lossTypes.set(String(row.lossType), (lossTypes.get(String(row.lossType)) ?? 0) + 1);
  return {
    count: rows.length,
    npc: rows.filter((r) => npc.get(r.id)!.includes('npc')).length,
    lossTypes: [...lossTypes].map(([lossType, count]) => ({ lossType, count })).sort((a, b) => b.count - a.count || (a.lossType < b.lossType ? -1 : 1)),
    grid,
    ...Object.fromEntries(Object.entries(tops).map(([name, of]) => [name, top(rows.map(of), self)])),
  };
}

const tribesOfAll = (ids: (string | undefined)[]) => ids.flatMap((id) => (id ? [...(tribes.get(id) ?? [])] : []));
const victimTribes = (r: BundleRow) => tribesOfAll([actorsOf(r).victimId]);
const killerTribes = (r: BundleRow) => [...new Set(tribesOfAll(actorsOf(r).killerCharacters))];

/** Of the entities of a type, the one most killmails name through `ids`. */
function busiest(type: string, ids: (row: BundleRow) => string[]): string {
  const counts = new Map<string, number>();
  for (const row of killmails) for (const id of new Set(ids(row))) counts.set(id, (counts.get(id) ?? 0) + 1);
  const known = new Set(entities.filter((e) => e.entityType === type && e.environment === 'stillness').map((e) => e.id));
  return [...counts].filter(([id]) => known.has(id)).sort((a, b) => b[1] - a[1])[0]![0];
}

async function activity(id: string): Promise<any> {
  const res = await gw.get(`/v1/entities/${encodeURIComponent(id)}/activity?cycles=all`);
  expect(res.status, JSON.stringify(res.body?.error)).toBe(200);
  return res.body.data;
}

const instants = (rows: BundleRow[]) => rows.map((r) => String(r.occurredAt)).sort((a, b) => Date.parse(a) - Date.parse(b));

describe('/v1/entities/{idOrSlug}/activity', () => {
  it("answers a character's kills and losses as the files give them", async () => {
    const id = busiest('character', (r) => [...actorsOf(r).killerCharacters, actorsOf(r).victimId].filter((x): x is string => !!x));
    const kills = killmails.filter((r) => actorsOf(r).killerIds.includes(id));
    const losses = killmails.filter((r) => actorsOf(r).victimId === id);
    expect(kills.length + losses.length).toBeGreaterThan(1);
    const answer = await activity(id);
    expect(answer.entity).toEqual({ id, entityType: 'character' });
    expect(answer.kills).toEqual(side(kills, { systems: (r) => [actorsOf(r).systemId], opponents: (r) => [actorsOf(r).victimId] }, id));
    expect(answer.losses).toEqual(side(losses, { systems: (r) => [actorsOf(r).systemId], opponents: (r) => [actorsOf(r).killerId] }, id));
    expect(Date.parse(answer.first)).toBe(Date.parse(instants([...kills, ...losses])[0]!));
    expect(Date.parse(answer.last)).toBe(Date.parse(instants([...kills, ...losses]).at(-1)!));
  });

  it("answers a tribe's, through its members, and a system's", async () => {
    const tribe = busiest('tribe', (r) => [...victimTribes(r), ...killerTribes(r)]);
    const answer = await activity(tribe);
    const kills = killmails.filter((r) => killerTribes(r).includes(tribe));
    const losses = killmails.filter((r) => victimTribes(r).includes(tribe));
    expect(kills.length + losses.length).toBeGreaterThan(1);
    expect(answer.kills).toEqual(side(kills, { systems: (r) => [actorsOf(r).systemId], opponents: victimTribes }, tribe));
    expect(answer.losses).toEqual(side(losses, { systems: (r) => [actorsOf(r).systemId], opponents: killerTribes }, tribe));

    const system = busiest('system', (r) => [actorsOf(r).systemId].filter((x): x is string => !!x));
    const inSystem = killmails.filter((r) => actorsOf(r).systemId === system);
    await esSearches(); // the first scrape counts rows
    const before = await esSearches();
    const answered = await activity(system);
    expect(await esSearches(), 'one search').toBe(before + 1);
    expect(answered.killmails).toEqual(
      side(inSystem, { killers: (r) => [actorsOf(r).killerId], victims: (r) => [actorsOf(r).victimId], killerTribes, victimTribes }, system),
    );
    expect(answered.kills).toBeUndefined();
  });

  it('leaves out the killmails of the labels `exclude` names, as the files label them', async () => {
    const system = busiest('system', (r) => [actorsOf(r).systemId].filter((x): x is string => !!x));
    const inSystem = killmails.filter((r) => actorsOf(r).systemId === system);
    const kept = inSystem.filter((r) => !npc.get(r.id)!.some((label) => label === 'npc' || label === 'structure'));
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(inSystem.length);
    const res = await gw.get(`/v1/entities/${encodeURIComponent(system)}/activity?cycles=all&exclude=npc,structure`);
    expect(res.status).toBe(200);
    expect(res.body.data.killmails).toEqual(side(kept, { killers: (r) => [actorsOf(r).killerId], victims: (r) => [actorsOf(r).victimId], killerTribes, victimTribes }, system));
  });

  it('is a 400 for another entity type and a 404 for an unknown entity', async () => {
    const item = entities.find((e) => e.entityType === 'item')!;
    expect((await gw.get(`/v1/entities/${encodeURIComponent(item.id)}/activity`)).status).toBe(400);
    expect((await gw.get('/v1/entities/character:stillness:0/activity')).status).toBe(404);
  });
});

/** Searches the gateway made on the killmails index (its own metric). */
async function esSearches(): Promise<number> {
  const text = (await gw.get('/v1/metrics')).text;
  return Number(/_elasticsearch_request_duration_seconds_count\{index="killmails"[^}]*\} (\d+)/.exec(text)?.[1] ?? 0);
}
