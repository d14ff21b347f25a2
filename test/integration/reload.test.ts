/**
 * A reload under a running gateway: a cursor handed out before it keeps paging the
 * generation it came from while that generation is kept (every row once, from the old
 * bundle), and fails with a 400 naming `cursor` once it is dropped. Exports follow the
 * live generation.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readAllRows } from '../../generator/read-bundle.ts';
import { writeBundle } from '../../generator/write-bundle.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { newestFirst } from '../support/expect.ts';

let gw: TestGateway;
let work: string;

beforeAll(async () => {
  gw = await startTestGateway({ name: 'reload', scale: 1, seed: 21 });
  work = await mkdtemp(path.join(tmpdir(), 'reload-'));
}, 300_000);

afterAll(async () => {
  await gw?.close();
  await rm(work, { recursive: true, force: true });
});

async function reload(seed: number): Promise<string> {
  const dir = path.join(work, `seed-${seed}`);
  await writeBundle(dir, { scale: 1, seed });
  await gw.loadNext(dir);
  return dir;
}

it('keeps a cursor on its generation across one reload, and refuses it after the next', async () => {
  const rows = (await readAllRows(gw.bundleDir, 'killmails.jsonl')).filter((r) => r.environment === 'stillness');
  const expected = newestFirst(rows, (r) => r.occurredAt, (r) => r.id)
    .map((r) => r.id);

  const first = await gw.get('/v1/killmails?cycles=all&limit=5');
  expect(first.body.nextCursor).toBeDefined();
  const seenBefore = first.body.data.map((r: { id: string }) => r.id);

  const next = await reload(22);
  const walked = [...seenBefore];
  let cursor: string | undefined = first.body.nextCursor;
  while (cursor) {
    const page = await gw.get(`/v1/killmails?cycles=all&limit=5&cursor=${cursor}`);
    expect(page.status).toBe(200);
    walked.push(...page.body.data.map((r: { id: string }) => r.id));
    cursor = page.body.nextCursor;
  }
  expect(walked).toEqual(expected);

  // Exports come from the new bundle.
  const served = await gw.get('/v1/exports/manifest.json');
  expect(served.text).toBe(await readFile(path.join(next, 'manifest.json'), 'utf8'));

  await reload(23);
  const stale = await gw.get(`/v1/killmails?cycles=all&limit=5&cursor=${first.body.nextCursor}`);
  expect(stale.status).toBe(400);
  expect(stale.body.error.details).toEqual({ parameter: 'cursor' });
});
