/**
 * `/v1/autocomplete` sends no exact id or slug lookup for text with no `:` or `-`, but only
 * while every id of the live generation has a `:` and every slug a `-` (the export
 * format promises the first, not the second), counted once per generation. Here the registry's
 * next export publishes one slug without a dash: once it is live, typing that slug must answer
 * its entity first. The slug is a word no name starts with, so only the exact lookup can find
 * it. Expected rows are read from the bundle files.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleRow, readAllRows } from '../../generator/read-bundle.ts';
import { writeNextExport } from '../../generator/next-export.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { fold } from '../support/expect.ts';

const SLUG = 'qzplainslug';

let gw: TestGateway;
let work: string;

beforeAll(async () => {
  gw = await startTestGateway({ name: 'autocomplete-exact', scale: 1, seed: 5 });
  work = await mkdtemp(path.join(tmpdir(), 'autocomplete-exact-'));
}, 300_000);

afterAll(async () => {
  await gw?.close();
  await rm(work, { recursive: true, force: true });
});

const ok = async (url: string) => {
  const res = await gw.get(url);
  expect(res.status, url).toBe(200);
  return res.body;
};

/** Publishes and loads the next export, the first stillness entity's slug replaced by SLUG; its rows. */
async function publishPlainSlug(): Promise<BundleRow[]> {
  const dir = path.join(work, 'next');
  let edited = false;
  await writeNextExport(gw.bundleDir, dir, {
    entities: async function* (rows) {
      for await (const row of rows) {
        const edit = !edited && row.environment === 'stillness';
        edited ||= edit;
        yield edit ? { ...row, slug: SLUG } : row;
      }
    },
  });
  await gw.loadNext(dir);
  return readAllRows(dir, 'entities.jsonl');
}

describe('/v1/autocomplete when a slug has no dash', () => {
  let published: BundleRow[];

  it('answers the entity of a slug without a separator first, once a generation with it is live', async () => {
    const before = await readAllRows(gw.bundleDir, 'entities.jsonl');
    expect(before.filter((r) => r.slug === SLUG || [r.name, r.displayName].some((n) => typeof n === 'string' && fold(n).startsWith(SLUG.slice(0, 4)))), 'nothing is near the slug yet').toEqual([]);
    // The live generation has every id and slug separated (counted now): nothing to find.
    expect((await ok(`/v1/autocomplete?cycles=all&q=${SLUG}`)).data).toEqual([]);

    published = await publishPlainSlug();
    const row = published.find((r) => r.slug === SLUG)!;
    expect(row, 'the next export has the edited slug').toBeDefined();
    expect(published.filter((r) => [r.name, r.displayName].some((n) => typeof n === 'string' && fold(n).startsWith(SLUG.slice(0, 4)))), 'no name starts like the slug').toEqual([]);
    expect((await ok(`/v1/autocomplete?cycles=all&q=${SLUG}`)).data[0]).toMatchObject({ id: row.id, slug: SLUG });
  });

  it('still answers ids, dashed slugs and names', async () => {
    const stillness = published.filter((r) => r.environment === 'stillness');
    const prefixOf = (r: BundleRow) => (typeof r.name === 'string' ? fold(r.name).slice(0, 5) : '');
    const startsWith = (prefix: string) => stillness.filter((r) => [r.name, r.displayName].some((n) => typeof n === 'string' && fold(n).startsWith(prefix)));
    const row = stillness.find((r) => r.slug !== SLUG && /^[a-z]{5}$/.test(prefixOf(r)) && startsWith(prefixOf(r)).length === 1)!;
    expect(row, 'the bundle has a name with a unique prefix').toBeDefined();
    for (const q of [row.id, row.slug, prefixOf(row)]) expect((await ok(`/v1/autocomplete?cycles=all&q=${encodeURIComponent(q)}`)).data[0].id, q).toBe(row.id);
  });
});
