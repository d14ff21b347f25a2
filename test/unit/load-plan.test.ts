/** The load plan (loader/plan.ts) and the id set an update sweeps with (loader/id-set.ts). */
import { describe, expect, it } from 'vitest';
import { IdSet } from '../../loader/id-set.ts';
import { type PlannedFile, planIndices, shardsFor } from '../../loader/plan.ts';

const descriptions = [
  { name: 'entities', files: ['entities'] },
  { name: 'relations', files: ['relations'] },
  { name: 'killmails', files: ['killmails'], dependsOn: ['entities', 'relations'] },
  { name: 'events', files: ['events'] },
  { name: 'chain_objects', files: ['chain_objects', 'sui_objects'] },
];

function files(shas: Record<string, string>, rows = 100_000): Map<string, PlannedFile> {
  return new Map(Object.entries(shas).map(([stem, sha256]) => [`${stem}.jsonl`, { path: `${stem}.jsonl`, sha256, sizeBytes: rows * 100, rowCount: rows }]));
}

const base = { prefix: 'p', descriptions, schema: 's1', shardTargetBytes: 1e12 };
const A = { entities: 'e1', relations: 'r1', killmails: 'k1', events: 'v1' };

function liveOf(generation: string, shas: Record<string, string>, schema = 's1') {
  const plan = planIndices({ ...base, schema, generation, files: files(shas) });
  return { generation, indices: Object.fromEntries(plan.map((p) => [p.name, p.index])), contentKeys: Object.fromEntries(plan.map((p) => [p.name, p.key])) };
}

describe('planIndices', () => {
  it('builds everything when nothing is live', () => {
    const plan = planIndices({ ...base, generation: 'g1', files: files(A) });
    expect(plan.map((p) => [p.name, p.action, p.index])).toEqual([
      ['entities', 'build', 'p-entities-g1'],
      ['relations', 'build', 'p-relations-g1'],
      ['killmails', 'build', 'p-killmails-g1'],
      ['events', 'build', 'p-events-g1'],
      ['chain_objects', 'build', 'p-chain_objects-g1'],
    ]);
    expect(plan.every((p) => p.previous === undefined)).toBe(true);
  });

  it('reuses the live index of an unchanged file and updates a changed large one', () => {
    const live = liveOf('g1', A);
    const plan = planIndices({ ...base, generation: 'g2', files: files({ ...A, events: 'v2' }), live });
    expect(Object.fromEntries(plan.map((p) => [p.name, [p.action, p.index, p.from]]))).toEqual({
      entities: ['reuse', 'p-entities-g1', 'p-entities-g1'],
      relations: ['reuse', 'p-relations-g1', 'p-relations-g1'],
      killmails: ['reuse', 'p-killmails-g1', 'p-killmails-g1'],
      events: ['update', 'p-events-g2', 'p-events-g1'],
      // Absent in both bundles: the same (empty) index serves.
      chain_objects: ['reuse', 'p-chain_objects-g1', 'p-chain_objects-g1'],
    });
  });

  it('rebuilds an index whose dependencies changed, even if its own file did not', () => {
    const live = liveOf('g1', A);
    const plan = planIndices({ ...base, generation: 'g2', files: files({ ...A, relations: 'r2' }), live });
    const killmails = plan.find((p) => p.name === 'killmails')!;
    expect([killmails.action, killmails.previous]).toEqual(['build', 'p-killmails-g1']);
    expect(plan.find((p) => p.name === 'relations')!.action).toBe('update');
  });

  it('keeps the index a reused generation reads, under its builder\'s name', () => {
    const g2 = { ...liveOf('g1', A), generation: 'g2' };
    const plan = planIndices({ ...base, generation: 'g3', files: files(A), live: g2 });
    expect(plan.find((p) => p.name === 'events')!.index).toBe('p-events-g1');
  });

  it('builds small changed files, everything when forced, and everything on another schema', () => {
    const live = liveOf('g1', A);
    const small = planIndices({ ...base, generation: 'g2', files: files({ ...A, events: 'v2' }, 10), live });
    expect(small.find((p) => p.name === 'events')!.action).toBe('build');
    const forced = planIndices({ ...base, generation: 'g2', files: files(A), live, force: true });
    expect(forced.every((p) => p.action === 'build' && p.previous === `p-${p.name}-g1`)).toBe(true);
    const upgraded = planIndices({ ...base, schema: 's2', generation: 'g2', files: files(A), live });
    expect(upgraded.every((p) => p.action === 'build')).toBe(true);
  });

  it('builds anew when the shard count a file needs changes', () => {
    const live = liveOf('g1', A);
    const plan = planIndices({ ...base, shardTargetBytes: 1e6, generation: 'g2', files: files({ ...A, events: 'v2' }), live });
    expect(plan.find((p) => p.name === 'events')!).toMatchObject({ action: 'build', shards: 10 });
  });
});

describe('shardsFor', () => {
  it('gives one primary shard per target bytes, at least one', () => {
    expect(shardsFor(0, 100)).toBe(1);
    expect(shardsFor(100, 100)).toBe(1);
    expect(shardsFor(101, 100)).toBe(2);
  });
});

describe('IdSet', () => {
  it('counts distinct ids and answers membership once sealed', () => {
    const set = new IdSet();
    const ids = Array.from({ length: 5000 }, (_, i) => `event:${i}`);
    for (const id of [...ids, 'event:7', 'event:8']) set.add(id);
    expect(set.added).toBe(5002);
    expect(set.seal()).toBe(5000);
    expect(ids.every((id) => set.has(id))).toBe(true);
    expect(set.has('event:5000')).toBe(false);
    expect(() => new IdSet().has('x')).not.toThrow();
  });
});
