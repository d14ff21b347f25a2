/**
 * `/v1/autocomplete` suggests the same entities whatever the order of the export's lines. The
 * completion suggester ranks by weight and leaves equal weights in index order, which the order
 * of the lines and the loader's concurrent bulk requests decide (at scale 70, 145 of 3,000
 * prefixes suggested another ten on a second load of the very same bundle). Here the next export
 * holds the same entities in reverse order: each prefix of a name must suggest the same ten.
 * Prefixes, and which of them have more candidates than ten, are read from the bundle files.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleRow, readAllRows } from '../../generator/read-bundle.ts';
import { writeNextExport } from '../../generator/next-export.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';

let gw: TestGateway;
let work: string;

beforeAll(async () => {
  gw = await startTestGateway({ name: 'autocomplete-order' });
  work = await mkdtemp(path.join(tmpdir(), 'autocomplete-order-'));
}, 300_000);

afterAll(async () => {
  await gw?.close();
  await rm(work, { recursive: true, force: true });
});

const names = (row: BundleRow) => [row.name, row.displayName].filter((n): n is string => typeof n === 'string' && n.trim() !== '');

/** The first one to three letters of each name of the environment: what a box holds as typing starts. */
function prefixesOf(rows: BundleRow[], environment: string): string[] {
  const prefixes = new Set<string>();
  for (const row of rows.filter((r) => r.environment === environment)) {
    for (const name of names(row)) {
      const word = /^\p{L}+/u.exec(name)?.[0].toLowerCase() ?? '';
      for (let n = 1; n <= Math.min(3, word.length); n++) prefixes.add(word.slice(0, n));
    }
  }
  return [...prefixes].sort();
}

async function suggested(prefixes: string[]): Promise<Map<string, string[]>> {
  const answers = new Map<string, string[]>();
  for (const q of prefixes) {
    const res = await gw.get(`/v1/autocomplete?cycles=all&q=${encodeURIComponent(q)}`);
    expect(res.status, q).toBe(200);
    answers.set(q, (res.body.data as { id: string }[]).map((s) => s.id));
  }
  return answers;
}

describe('/v1/autocomplete and the order of the export', () => {
  it('suggests the same ten for each prefix when the entities come in reverse order', async () => {
    const rows = await readAllRows(gw.bundleDir, 'entities.jsonl');
    const environment = gw.config.defaultEnvironment;
    const prefixes = prefixesOf(rows, environment);
    // The test means something only where more names than ten start with the prefix.
    const crowded = prefixes.filter((p) => rows.filter((r) => r.environment === environment && names(r).some((n) => n.toLowerCase().startsWith(p))).length > 10);
    expect(crowded.length).toBeGreaterThan(5);

    const before = await suggested(prefixes);
    const next = path.join(work, 'reversed');
    await writeNextExport(gw.bundleDir, next, {
      entities: async function* (lines) {
        const all: BundleRow[] = [];
        for await (const row of lines) all.push(row);
        yield* all.reverse();
      },
    });
    await gw.loadNext(next);
    const after = await suggested(prefixes);

    const changed = prefixes.filter((p) => before.get(p)!.join() !== after.get(p)!.join());
    expect(changed, `suggestions changed for ${changed.length} of ${prefixes.length} prefixes`).toEqual([]);
  }, 300_000);
});
