/**
 * KEEP_HOURS: a generation loaded less than that many hours ago stays kept beyond
 * KEEP_GENERATIONS (so `bundle=` reads it), and is dropped once it is older. Three loads at
 * KEEP_GENERATIONS=1 and KEEP_HOURS=1: all three queryable; the next prune two hours on keeps
 * the live one alone.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeNextExport } from '../../generator/next-export.ts';
import { pruneGenerations } from '../../loader/generations.ts';
import { LIVE_CACHE_MS } from '../../src/search/search-service.ts';
import { bundleIdOf } from '../support/bundle-id.ts';
import { testClient } from '../support/elasticsearch.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';

let gw: TestGateway;
let work: string;
const ids: string[] = [];

beforeAll(async () => {
  gw = await startTestGateway({ name: 'keep-hours', scale: 1, seed: 31, env: { KEEP_GENERATIONS: '1', KEEP_HOURS: '1' } });
  work = await mkdtemp(path.join(tmpdir(), 'keep-hours-'));
  ids.push(await bundleIdOf(gw.bundleDir));
  let from = gw.bundleDir;
  for (const tag of ['b', 'c']) {
    const dir = path.join(work, tag);
    await writeNextExport(from, dir, {});
    await gw.loadNext(dir);
    ids.push(await bundleIdOf(dir));
    from = dir;
  }
}, 300_000);

afterAll(async () => {
  await gw?.close();
  await rm(work, { recursive: true, force: true });
});

it('keeps every generation younger than KEEP_HOURS beyond KEEP_GENERATIONS, and drops them once older', async () => {
  // Each ask by a URL of its own: answers are kept per live generation (the list changes only at a load, where a prune happens).
  let asked = 0;
  const queryable = async () => (await gw.get(`/v1/bundles?limit=${50 + asked++}`)).body.data.filter((b: { queryable: boolean }) => b.queryable).map((b: { bundleId: string }) => b.bundleId);
  expect(await queryable()).toEqual([...ids].reverse());
  expect((await gw.get(`/v1/entities?limit=1&bundle=${ids[0]}`)).status).toBe(200);
  const client = testClient();
  try {
    const live = (await gw.get('/v1/ready')).body.data.generation;
    await pruneGenerations(client, gw.prefix, [live], 1, 1, Date.now() + 2 * 3_600_000);
  } finally {
    await client.close();
  }
  await new Promise((resolve) => setTimeout(resolve, LIVE_CACHE_MS + 100));
  expect(await queryable()).toEqual([ids[2]]);
  expect((await gw.get(`/v1/entities?limit=2&bundle=${ids[0]}`)).status).toBe(410);
});
