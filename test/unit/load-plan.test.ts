/**
 * The load plan (loader/plan.ts): reuse, update or build, shards, and whether an update pays;
 * the line sample it estimates with (loader/reuse-estimate.ts); the id set an update sweeps with
 * (loader/id-set.ts).
 */
import { describe, expect, it } from 'vitest';
import { IdSet } from '../../loader/id-set.ts';
import { lineHash } from '../../loader/load-file.ts';
import { type PlannedFile, SPREAD_MIN_SHARD_BYTES, planIndices, shardsFor, updatePays, updateStillPays } from '../../loader/plan.ts';
import { estimateReuse, sampleLineHashes } from '../../loader/reuse-estimate.ts';

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

  it('spreads a large file over every data node, a small one over no more shards than its size warrants', () => {
    const target = 25 * 1024 ** 3;
    expect(shardsFor(10 * SPREAD_MIN_SHARD_BYTES, target, 4)).toBe(4);
    expect(shardsFor(3 * SPREAD_MIN_SHARD_BYTES, target, 4)).toBe(3);
    expect(shardsFor(SPREAD_MIN_SHARD_BYTES - 1, target, 4)).toBe(1);
    expect(shardsFor(1000, target, 8)).toBe(1);
    // One node: size alone decides, as before.
    expect(shardsFor(10 * SPREAD_MIN_SHARD_BYTES, target, 1)).toBe(1);
    // Size beyond the nodes: size decides.
    expect(shardsFor(5 * target, target, 2)).toBe(5);
  });

  it('builds anew when the data nodes change a file\'s shards', () => {
    const big = new Map([['events.jsonl', { path: 'events.jsonl', sha256: 'v1', sizeBytes: 4 * SPREAD_MIN_SHARD_BYTES, rowCount: 100_000 }]]);
    const one = planIndices({ ...base, shardTargetBytes: 25 * 1024 ** 3, generation: 'g1', files: big });
    const live = { generation: 'g1', indices: Object.fromEntries(one.map((p) => [p.name, p.index])), contentKeys: Object.fromEntries(one.map((p) => [p.name, p.key])) };
    const next = new Map([['events.jsonl', { ...big.get('events.jsonl')!, sha256: 'v2' }]]);
    const same = planIndices({ ...base, shardTargetBytes: 25 * 1024 ** 3, generation: 'g2', files: next, live });
    expect(same.find((p) => p.name === 'events')).toMatchObject({ action: 'update', shards: 1 });
    const spread = planIndices({ ...base, shardTargetBytes: 25 * 1024 ** 3, generation: 'g2', files: next, live, dataNodes: 3 });
    expect(spread.find((p) => p.name === 'events')).toMatchObject({ action: 'build', shards: 3 });
  });
});

describe('whether an update pays', () => {
  it('updates a next export (nearly every line kept) and builds a file of other data (nearly none kept)', () => {
    expect(updatePays({ rows: 1_000_000, unchangedShare: 0.99, previousDocuments: 993_000 })).toBe(true);
    expect(updatePays({ rows: 1_000_000, unchangedShare: 0.02, previousDocuments: 1_000_000 })).toBe(false);
    expect(updatePays({ rows: 1_000_000, unchangedShare: 0.7, previousDocuments: 1_000_000 })).toBe(true);
    expect(updatePays({ rows: 1_000_000, unchangedShare: 0.3, previousDocuments: 1_000_000 })).toBe(false);
  });

  it('counts the rows that left: an export that kept most lines but dropped most of the old ones is built', () => {
    expect(updatePays({ rows: 100_000, unchangedShare: 0.9, previousDocuments: 100_000 })).toBe(true);
    expect(updatePays({ rows: 100_000, unchangedShare: 0.9, previousDocuments: 2_000_000 })).toBe(false);
  });

  it('plans a build for a candidate whose estimate says so, and an update where it pays or nothing was estimated', () => {
    const live = liveOf('g1', A);
    const next = files({ ...A, events: 'v2', entities: 'e2', relations: 'r2' });
    const estimates = new Map([
      ['events', { rows: 100_000, unchangedShare: 0.99, previousDocuments: 100_000 }],
      ['entities', { rows: 100_000, unchangedShare: 0.01, previousDocuments: 100_000 }],
    ]);
    const plan = planIndices({ ...base, generation: 'g2', files: next, live, estimates });
    const actions = Object.fromEntries(plan.map((p) => [p.name, p.action]));
    expect(actions).toMatchObject({ events: 'update', entities: 'build', relations: 'update' });
    expect(plan.find((p) => p.name === 'entities')!.previous).toBe('p-entities-g1');
  });
});

describe('the line sample of an estimate', () => {
  const lines = Array.from({ length: 20_000 }, (_, i) => `{"id":"row:${i}","n":${i}}`);
  const text = Buffer.from(`${lines.join('\n')}\n`);
  /** The file as chunks of awkward sizes, so lines straddle them. */
  const fileOf = (bytes: Buffer, chunk = 777) => ({
    gzip: false,
    sizeBytes: bytes.length,
    rowCount: lines.length,
    async *open() {
      for (let at = 0; at < bytes.length; at += chunk) yield bytes.subarray(at, at + chunk);
    },
  });

  it('hashes whole lines spread over the whole file, as the loader hashes them', async () => {
    const all = new Map(lines.map((line, i) => [lineHash(Buffer.from(line)), i]));
    const sampled = await sampleLineHashes(fileOf(text), 200);
    expect(sampled.length).toBeGreaterThanOrEqual(195);
    expect(sampled.length).toBeLessThanOrEqual(201);
    const at = sampled.map((hash) => all.get(hash));
    expect(at.every((i) => i !== undefined)).toBe(true);
    // Evenly spread: one line in each of the file's tenths.
    for (let tenth = 0; tenth < 10; tenth += 1) expect(at.filter((i) => Math.floor(i! / 2000) === tenth).length, `tenth ${tenth}`).toBeGreaterThan(15);
  });

  it('takes every line of a file smaller than the sample, and lines ending in CRLF as the loader reads them', async () => {
    const small = Buffer.from('{"id":"a"}\r\n{"id":"b"}\r\n{"id":"c"}\r\n');
    const sampled = await sampleLineHashes({ gzip: false, sizeBytes: small.length, async *open() { yield small; } }, 1000);
    expect(sampled).toEqual(['{"id":"b"}', '{"id":"c"}'].map((l) => lineHash(Buffer.from(l))));
  });

  it('estimates the share of lines the live index holds', async () => {
    // The live index holds the lines of the first 60 % of the file.
    const held = new Set(lines.slice(0, 12_000).map((line) => lineHash(Buffer.from(line))));
    const previous = {
      unchanged: async (hashes: readonly string[]) => new Map(hashes.filter((h) => held.has(h)).map((h) => [h, 'id'])),
      firstSeen: async () => new Map(),
    };
    const estimate = (await estimateReuse(fileOf(text), previous, 12_000))!;
    expect(estimate.rows).toBe(20_000);
    expect(estimate.previousDocuments).toBe(12_000);
    expect(estimate.unchangedShare).toBeGreaterThan(0.55);
    expect(estimate.unchangedShare).toBeLessThan(0.65);
  });
});

describe('whether an update over a line index goes on', () => {
  it('goes on through a next export\'s new rows on top, however many the file gained, and while most lines are held', () => {
    expect(updateStillPays({ sent: 75_000, matched: 0, rows: 10_075_000, previousDocuments: 10_000_000 })).toBe(true);
    expect(updateStillPays({ sent: 200_000, matched: 9_000_000, rows: 10_000_000, previousDocuments: 10_000_000 })).toBe(true);
  });

  it('stops for a build once a file of other data has shown itself: within 5 % of the file (50,000 lines at most)', () => {
    expect(updateStillPays({ sent: 5_001, matched: 0, rows: 100_000, previousDocuments: 100_000 })).toBe(false);
    expect(updateStillPays({ sent: 5_000, matched: 0, rows: 100_000, previousDocuments: 100_000 })).toBe(true);
    expect(updateStillPays({ sent: 50_001, matched: 10, rows: 10_000_000, previousDocuments: 10_000_000 })).toBe(false);
    expect(updateStillPays({ sent: 30, matched: 0, rows: 30, previousDocuments: 30 })).toBe(false);
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

  it('says every id added before was seen: its Bloom filter has no false negatives (probes once went negative and missed)', () => {
    const set = new IdSet(5000);
    const ids = Array.from({ length: 5000 }, (_, i) => `event:stillness:0x${i.toString(16)}:${i % 7}`);
    for (const id of ids) set.add(id);
    expect(ids.filter((id) => !set.add(id))).toEqual([]);
  });
});
