/**
 * What became visible since: a client that follows events and killmails (a killfeed, a
 * mirror) polls with `sort=indexedAt:asc&since_indexed=<meta.indexedThrough>` and gets exactly
 * the rows the next export added — a row that arrived late with an old `occurredAt` included —
 * in the order they became visible. Entities by `updated_since`. Expected rows are computed
 * from the two bundles' files.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAllRows } from '../../generator/read-bundle.ts';
import { withNewRows } from '../../generator/new-rows.ts';
import { writeNextExport } from '../../generator/next-export.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { byteCompare, expectError, expectedEntities, instantNanos, readBundle, walk } from '../support/expect.ts';

let gw: TestGateway;
let work: string;
let next: string;
/** `meta.indexedThrough` of the first generation. */
let through: string;

/** Rows of `after` that `before` lacks, in one environment, in the order they became visible (all in one load: as they happened). */
async function added(stem: string, environment: string): Promise<string[]> {
  const old = new Set((await readAllRows(gw.bundleDir, `${stem}.jsonl`)).map((r) => r.id));
  return (await readAllRows(next, `${stem}.jsonl`))
    .filter((r) => r.environment === environment && !old.has(r.id))
    .sort((a, b) => {
      const d = instantNanos(a.occurredAt) - instantNanos(b.occurredAt);
      return d !== 0n ? (d > 0n ? 1 : -1) : byteCompare(a.id, b.id);
    })
    .map((r) => r.id);
}

beforeAll(async () => {
  gw = await startTestGateway({ name: 'following', scale: 2, seed: 41 });
  work = await mkdtemp(path.join(tmpdir(), 'following-'));
  const first = await gw.get('/v1/killmails?limit=1');
  through = first.body.meta.indexedThrough;
  next = path.join(work, 'next');
  await writeNextExport(gw.bundleDir, next, { events: withNewRows('next'), killmails: withNewRows('next') });
  await gw.loadNext(next);
}, 300_000);

afterAll(async () => {
  await gw?.close();
  await rm(work, { recursive: true, force: true });
});

describe('following new rows', () => {
  it('hands out meta.indexedThrough on timeline pages, later after each load', async () => {
    expect(Date.parse(through)).toBeGreaterThan(0);
    const now = await gw.get('/v1/events?limit=1');
    expect(now.body.meta.indexedThrough > through).toBe(true);
  });

  it.each(['events', 'killmails'])('%s: since_indexed answers exactly the rows the next export added, the late arrival included', async (stem) => {
    for (const environment of ['stillness', 'utopia']) {
      const expected = await added(stem, environment);
      const { rows } = await walk(gw, `/v1/${stem}?cycles=all&environment=${environment}&sort=indexedAt:asc&since_indexed=${through}`, 5);
      expect(rows.map((r) => r.id), environment).toEqual(expected);
      if (environment === 'stillness') expect(expected.some((id) => id.endsWith(':next-late'))).toBe(true);
    }
    // The late arrival is older than everything: newest-first by time it is the very last row.
    const { rows } = await walk(gw, `/v1/${stem}?cycles=all&since_indexed=${through}`, 50);
    expect(rows.at(-1).id).toMatch(/:next-late$/);
  });

  it('answers nothing new after the latest meta.indexedThrough', async () => {
    const latest = (await gw.get('/v1/events?limit=1')).body.meta.indexedThrough;
    const { rows } = await walk(gw, `/v1/events?cycles=all&since_indexed=${encodeURIComponent(latest)}`, 50);
    expect(rows).toEqual([]);
  });

  it('never answers an indexedThrough earlier than the since_indexed asked: a poll never moves back', async () => {
    // What a gateway still on the generation before answers a poll another gateway handed a later instant.
    const latest = (await gw.get('/v1/events?limit=1')).body.meta.indexedThrough;
    const later = new Date(Date.parse(latest) + 60_000).toISOString();
    const ahead = (await gw.get(`/v1/events?cycles=all&since_indexed=${encodeURIComponent(later)}`)).body;
    expect(ahead.data).toEqual([]);
    expect(Date.parse(ahead.meta.indexedThrough)).toBe(Date.parse(later));
    expect((await gw.get(`/v1/killmails?since_indexed=${encodeURIComponent(through)}&limit=1`)).body.meta.indexedThrough).toBe(latest);
  });

  it('lists every row by first-seen instant: the first load\'s rows, then the next one\'s', async () => {
    const { rows } = await walk(gw, '/v1/killmails?cycles=all&sort=indexedAt:asc', 50);
    const fresh = new Set(await added('killmails', 'stillness'));
    const firstNew = rows.findIndex((r) => fresh.has(r.id));
    expect(firstNew).toBeGreaterThan(0);
    expect(rows.slice(firstNew).every((r) => fresh.has(r.id))).toBe(true);
  });

  it('refuses an impossible since_indexed with a 400 naming it', async () => {
    expectError(await gw.get('/v1/events?since_indexed=2026-02-30T00:00:00Z'), 400, 'bad_request', 'since_indexed');
    expectError(await gw.get('/v1/killmails?since_indexed=yesterday'), 400, 'bad_request', 'since_indexed');
  });
});

describe('entities by updated_since', () => {
  it('answers the entities updated at or after an instant, in the list order', async () => {
    const bundle = await readBundle(next);
    const times = bundle.entities.map((r) => r.updatedAt as string).filter(Boolean).sort((a, b) => (instantNanos(a) < instantNanos(b) ? -1 : 1));
    const median = times[Math.floor(times.length / 2)]!;
    const expected = expectedEntities(bundle, 'all', (r) => typeof r.updatedAt === 'string' && instantNanos(r.updatedAt) >= instantNanos(median));
    expect(expected.length).toBeGreaterThan(0);
    const { rows } = await walk(gw, `/v1/entities?cycles=all&updated_since=${encodeURIComponent(median)}`, 100);
    expect(rows.map((r) => r.id)).toEqual(expected);
  });
});
