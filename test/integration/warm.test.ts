/**
 * A new generation is served once the gateway's most asked expensive searches ran on it
 * (src/search/search-service.ts WARM_REQUESTS): the first `group_by` a client asks after a swap
 * is answered from Elasticsearch's request cache of the new index — a hit, no computation — and
 * answers what the new bundle's files say. A search nobody asked before the swap is computed as
 * usual (the control that shows the cache figures are read right).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readAllRows } from '../../generator/read-bundle.ts';
import { writeNextExport } from '../../generator/next-export.ts';
import type { GenerationDoc } from '../../src/indices/generation.ts';
import { testClient } from '../support/elasticsearch.ts';
import { cycleOf, cycleOfInstant, inScope } from '../support/expect.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { withNewRows } from '../../generator/new-rows.ts';

let gw: TestGateway;
let client: Client;
let work: string;
let next: string;

/** The request cache figures of a concrete index (one shard, no replica). */
async function cacheOf(index: string): Promise<{ hits: number; misses: number }> {
  const stats = await client.indices.stats({ index, metric: 'request_cache' });
  const cache = stats._all.primaries!.request_cache!;
  return { hits: cache.hit_count, misses: cache.miss_count };
}

beforeAll(async () => {
  client = testClient();
  gw = await startTestGateway({ name: 'warm', scale: 2, seed: 17 });
  work = await mkdtemp(path.join(tmpdir(), 'warm-'));
  // What clients ask of the first generation: the explorer's events timeline and a kind facet.
  for (let i = 0; i < 3; i++) {
    expect((await gw.get('/v1/events?group_by=kind')).status).toBe(200);
    expect((await gw.get('/v1/events?group_by=occurredAt:day')).status).toBe(200);
  }
  next = path.join(work, 'next');
  await writeNextExport(gw.bundleDir, next, { events: withNewRows('next') });
  await gw.loadNext(next);
}, 300_000);

afterAll(async () => {
  await gw?.close();
  await rm(work, { recursive: true, force: true });
});

it('answers the first group_by after a swap from the request cache the warm-up filled, with the new bundle\'s groups', async () => {
  const live = (await client.search<GenerationDoc>({ index: `${gw.prefix}-meta` })).hits.hits[0]!._source!;
  expect((await gw.get('/v1/ready')).body.data.generation).toBe(live.generation);
  const before = await cacheOf(live.indices!.events!);
  const res = await gw.get('/v1/events?group_by=kind');
  const after = await cacheOf(live.indices!.events!);
  expect(res.status).toBe(200);
  expect(after).toEqual({ hits: before.hits + 1, misses: before.misses });

  // The answer is the new file's: kinds of the current cycle's stillness events (the default scope; an event without a cycle has its instant's).
  const counts = new Map<string, number>();
  for (const row of await readAllRows(next, 'events.jsonl')) {
    if (row.environment !== 'stillness' || !inScope(cycleOf(row.cycle) ?? cycleOfInstant(row.occurredAt), 'default', live.currentCycle!)) continue;
    counts.set(row.kind, (counts.get(row.kind) ?? 0) + 1);
  }
  expect(new Map(res.body.data.map((g: { key: string; count: number }) => [g.key, g.count]))).toEqual(counts);
});

it('computes a search nobody asked before the swap (the control: the figures above are read right)', async () => {
  const live = (await client.search<GenerationDoc>({ index: `${gw.prefix}-meta` })).hits.hits[0]!._source!;
  const before = await cacheOf(live.indices!.events!);
  expect((await gw.get('/v1/events?group_by=module')).status).toBe(200);
  expect(await cacheOf(live.indices!.events!)).toEqual({ hits: before.hits, misses: before.misses + 1 });
});
