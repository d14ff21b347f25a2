/** `npm run load` as a user runs it: exit codes, `file:line` on a refused bundle, the summary. */
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { writeBundle } from '../../generator/write-bundle.ts';
import { runLoader } from '../../harness/loader-process.ts';
import { deleteIndices, testClient, uniquePrefix } from '../support/elasticsearch.ts';

const prefix = uniquePrefix('cli');
let work: string;

function load(...args: string[]) {
  return runLoader(args, { ES_URL: inject('esUrl'), INDEX_PREFIX: prefix, DATA_DIR: path.join(work, 'data'), INIT_CWD: work });
}

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'cli-'));
  await writeBundle(path.join(work, 'good'), { scale: 1, seed: 31 });
  await writeBundle(path.join(work, 'bad'), { scale: 1, seed: 32 });
  // A file that differs from the good bundle's: one the good bundle also has (same sha256) is reused, not read.
  await appendFile(path.join(work, 'bad', 'entities.jsonl'), 'not json\n');
});

afterAll(async () => {
  const client = testClient();
  await deleteIndices(client, prefix);
  await client.close();
  await rm(work, { recursive: true, force: true });
});

it('loads a bundle given relative to the caller, then refuses a bad one with file:line and exit 1', async () => {
  const good = load('good');
  expect(good.status, good.stderr).toBe(0);
  expect(good.stdout).toMatch(/loaded generation/);
  const again = load('good');
  expect(again.status).toBe(0);
  expect(again.stderr).toMatch(/already live/);
  const bad = load('bad');
  expect(bad.status).toBe(1);
  expect(bad.stderr).toMatch(/load refused: entities\.jsonl:\d+: /);
  expect(bad.stderr).toMatch(/the live generation is unchanged/);
  expect(load().status).toBe(2);
  expect(load('--follow', '--rollback').status).toBe(2);
});

it('refuses to start without ES_URL, naming it (it never provisions a node of its own)', () => {
  const { ES_URL: _, ...env } = process.env;
  const run = runLoader(['good'], { INIT_CWD: work }, { baseEnv: env, timeoutMs: 60_000 });
  expect(run.status).toBe(2);
  expect(run.stderr).toMatch(/ES_URL is not set/);
});

it('lists the kept generations and rolls back to the previous one', async () => {
  const list = load('--list');
  expect(list.status, list.stderr).toBe(0);
  expect(list.stdout).toMatch(/^live {2}\d{17}-[0-9a-f]{8}/);
  expect(load('--rollback').status).toBe(1);
  expect(load('--rollback').stderr).toMatch(/rollback refused: no other generation is kept/);
});
