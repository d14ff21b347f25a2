/**
 * `/v1/autocomplete` sends no exact id or slug lookup for text with no `:` or `-`, but only
 * while every id of the generation has a `:` and every slug a `-` (issue 23; the export format
 * promises the first, not the second). Here the registry publishes one slug without a dash:
 * typed, it must still answer its entity first. The slug is a word no name starts with, so only
 * the exact lookup can find it. Expected rows are read from the published bundle.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleRow, readAllRows } from '../../generator/read-bundle.ts';
import { writeNextExport } from '../../generator/next-export.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { fold } from '../support/expect.ts';

const SLUG = 'qzplainslug';

let gw: TestGateway;
let published: BundleRow[];

beforeAll(async () => {
  let dir = '';
  gw = await startTestGateway({
    name: 'autocomplete-exact',
    scale: 1,
    seed: 5,
    publish: async (bundleDir) => {
      dir = path.join(path.dirname(bundleDir), 'published');
      let edited = false;
      await writeNextExport(bundleDir, dir, {
        entities: async function* (rows) {
          for await (const row of rows) {
            const edit = !edited && row.environment === 'stillness';
            edited ||= edit;
            yield edit ? { ...row, slug: SLUG } : row;
          }
        },
      });
      return dir;
    },
  });
  published = await readAllRows(dir, 'entities.jsonl');
}, 300_000);

afterAll(() => gw?.close());

const ok = async (url: string) => {
  const res = await gw.get(url);
  expect(res.status, url).toBe(200);
  return res.body;
};

describe('/v1/autocomplete when a slug has no dash', () => {
  it('answers the entity of a slug typed in full first, though the slug has no separator', async () => {
    const row = published.find((r) => r.slug === SLUG)!;
    expect(row, 'the published bundle has the edited slug').toBeDefined();
    const named = published.filter((r) => [r.name, r.displayName].some((n) => typeof n === 'string' && fold(n).startsWith(SLUG.slice(0, 4))));
    expect(named, 'no name starts like the slug').toEqual([]);
    const body = await ok(`/v1/autocomplete?cycles=all&q=${SLUG}`);
    expect(body.data[0]).toMatchObject({ id: row.id, slug: SLUG });
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
