/**
 * Updates over a line index (loader/line-index.ts, line-match.ts), against a real
 * Elasticsearch: a next export edited in every way a registry edits one — new rows on top,
 * changed, removed, a late arrival, an id repeated either way round — sends exactly the lines
 * the live index does not hold (expected from the files), asks Elasticsearch nothing about the
 * unchanged ones, and leaves the index equal to the file. A damaged or missing line index is
 * never trusted: the update checks every line against Elasticsearch, says so, and writes one for
 * the next load. A follower killed in the middle of an update leaves the live generation as it
 * was and takes the export in when it starts again.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { type BundleRow, readAllRows } from '../../generator/read-bundle.ts';
import { writeBundle } from '../../generator/write-bundle.ts';
import { writeNextExport } from '../../generator/next-export.ts';
import { publishBundle } from '../../generator/publish.ts';
import { spawnFollower } from '../../harness/loader-process.ts';
import { HEADER_BYTES, lineIndexDir, lineIndexPath, openLineIndex } from '../../loader/line-index.ts';
import { type LoadOptions, type LoadSummary, loadBundle } from '../../loader/load-bundle.ts';
import { parseCycleStarts } from '../../src/config.ts';
import { type GenerationDoc, aliasName } from '../../src/indices/generation.ts';
import { deleteIndices, testClient, uniquePrefix } from '../support/elasticsearch.ts';
import { storedRows } from '../support/stored-rows.ts';
import { startStaticServer } from '../support/static-server.ts';

const cycleStarts = parseCycleStarts('5=2026-03-11T09:00:00Z,6=2026-06-25T09:00:00Z');
const prefix = uniquePrefix('line-index');
let client: Client;
let work: string;
/** Searches on an events index that ask for rows by their line's hash. */
let rowHashSearches = 0;

function options(extra: Partial<LoadOptions> = {}): LoadOptions {
  return { client, prefix, dataDir: path.join(work, 'data'), cycleStarts, updateMinRows: 1, ...extra };
}

/** The events file's lines, from its plain or `.gz` copy. */
async function lines(dir: string): Promise<string[]> {
  const plain = path.join(dir, 'events.jsonl');
  const bytes = existsSync(plain) ? await readFile(plain) : gunzipSync(await readFile(`${plain}.gz`));
  return bytes.toString('utf8').split('\n').filter((line) => line !== '');
}
const idOf = (line: string) => (JSON.parse(line) as BundleRow).id;

/** The rows an index holds after loading these lines: the last line of each id. */
function lastPerId(all: string[]): Map<string, string> {
  return new Map(all.map((line) => [idOf(line), line]));
}

/**
 * What an update of `before` into `after` must send: every line the index does not hold byte for
 * byte, and every line of an id sent before it in the file (the last line must win).
 */
function mustSend(before: string[], after: string[]): number[] {
  const held = new Set(lastPerId(before).values());
  const sentIds = new Set<string>();
  const out: number[] = [];
  after.forEach((line, i) => {
    if (!held.has(line) || sentIds.has(idOf(line))) {
      out.push(i + 1);
      sentIds.add(idOf(line));
    }
  });
  return out;
}

async function heldRows(): Promise<Map<string, string>> {
  const hits = await storedRows(client, { index: aliasName(prefix, 'events'), size: 10_000 });
  return new Map(hits.map((hit) => [String(hit.row.id), JSON.stringify(hit.row)]));
}

const events = (summary: LoadSummary) => summary.indices.find((r) => r.name === 'events')!;

async function liveDoc(p = prefix): Promise<GenerationDoc> {
  return (await client.search<GenerationDoc>({ index: aliasName(p, 'meta') })).hits.hits[0]!._source!;
}

beforeAll(async () => {
  client = testClient();
  client.diagnostic.on('request', (_error, result) => {
    const params = result?.meta.request.params;
    if (params?.path.includes('-events-') && params.path.endsWith('/_search') && String(params.body ?? '').includes('"rowHash"')) rowHashSearches += 1;
  });
  work = await mkdtemp(path.join(tmpdir(), 'line-index-'));
});

afterAll(async () => {
  await deleteIndices(client, prefix);
  await client.close();
  await rm(work, { recursive: true, force: true });
});

describe('an update over the live index’s line index', () => {
  let a: string;
  let b: string;
  let summary: LoadSummary;

  beforeAll(async () => {
    a = path.join(work, 'a');
    b = path.join(work, 'b');
    await writeBundle(a, { scale: 2, seed: 7 });
    await writeNextExport(a, b, {
      events: async function* (rows) {
        const all: BundleRow[] = [];
        for await (const row of rows) all.push(row);
        const newest = Date.parse(all[0]!.occurredAt);
        // New rows on top, and a newer line of a row further down whose old line stays in place (then wins).
        for (let i = 1; i <= 20; i++) yield { ...all[i]!, id: `${all[i]!.id}-new`, occurredAt: new Date(newest + i * 1000).toISOString() };
        yield { ...all[500]!, payload: { paged: 'twice' } };
        for (const [i, row] of all.entries()) {
          if (i === 300 || i === 301) continue; // removed
          if (i === 100 || i === 1200 || i === 2000) yield { ...row, payload: { revised: i } }; // changed
          else yield row;
        }
        // A changed line of an unchanged row, last: it wins.
        yield { ...all[900]!, payload: { revised: 'last' } };
        yield { ...all.at(-1)!, id: 'late-arrival', occurredAt: new Date(Date.parse(all.at(-1)!.occurredAt) - 86_400_000).toISOString() };
      },
    });
    await loadBundle(a, options());
    rowHashSearches = 0;
    summary = await loadBundle(b, options());
  });

  it('sends exactly the lines the live index does not hold, and those an earlier line of their id was sent for', async () => {
    const [before, after] = [await lines(a), await lines(b)];
    const result = events(summary);
    expect(result.action).toBe('update');
    expect(result.withoutLineIndex).toBeUndefined();
    expect(result.written).toBe(mustSend(before, after).length);
    // Worked out: 20 new, the paged row's newer line and its old line below, 3 changed, the last changed line, the late arrival.
    expect(result.written).toBe(27);
    const gone = [...lastPerId(before).keys()].filter((id) => !lastPerId(after).has(id));
    expect(result.removed).toBe(gone.length);
    expect(gone).toHaveLength(2);
    expect(result.match!.unchanged + result.written!).toBe(after.length);
  });

  it('asked Elasticsearch about no unchanged line: one search found the rows that left, one the ids of the changed lines', () => {
    expect(rowHashSearches).toBe(2);
  });

  it('records the rows that left and those that changed, from what the merge found', async () => {
    const [before, after] = [lastPerId(await lines(a)), lastPerId(await lines(b))];
    const live = await liveDoc();
    const found = await client.search({ index: live.changes!.events!, size: 1000, docvalue_fields: ['id', 'row'], _source: false });
    const recorded = found.hits.hits.map((hit) => JSON.parse(Buffer.from(String(hit.fields!.row![0]), 'base64').toString('utf8')) as BundleRow);
    const tombstones = recorded.filter((row) => row.removed === true);
    expect(tombstones.map((row) => row.id).sort()).toEqual([...before.keys()].filter((id) => !after.has(id)).sort());
    for (const row of tombstones) expect(row.removedAt).toBe(live.indexedAt);
    const rows = recorded.filter((row) => row.removed !== true);
    // Every row whose last line changed, as it is now (a row whose old line came again after a newer one may be told of too).
    const changed = [...after].filter(([id, line]) => before.has(id) && before.get(id) !== line).map(([id]) => id);
    expect(rows.map((row) => row.id)).toEqual(expect.arrayContaining(changed));
    for (const row of rows) expect(JSON.stringify(row), row.id).toBe(JSON.stringify(JSON.parse(after.get(row.id)!)));
  });

  it('holds exactly the last line of every id of the new file', async () => {
    const expected = lastPerId(await lines(b));
    const held = await heldRows();
    expect(held.size).toBe(expected.size);
    for (const [id, line] of expected) expect(held.get(id), id).toBe(JSON.stringify(JSON.parse(line)));
    expect(summary.counts.events).toBe(expected.size);
  });

  it('keeps a line index for the new index, and drops none a kept generation reads', async () => {
    const live = await liveDoc();
    const dir = lineIndexDir(path.join(work, 'data'), prefix);
    const opened = await openLineIndex(lineIndexPath(dir, live.indices!.events!), { index: live.indices!.events!, key: live.contentKeys!.events! }, live.counts.events!);
    expect('header' in opened).toBe(true);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('a line index that cannot be trusted', () => {
  async function nextOf(from: string, to: string, tag: string): Promise<void> {
    await writeNextExport(from, to, {
      events: async function* (rows) {
        let first = true;
        for await (const row of rows) {
          if (first) yield { ...row, id: `${row.id}-${tag}` };
          first = false;
          yield row;
        }
      },
    });
  }

  it('damaged: the update asks Elasticsearch about every line, says why, and writes a good one for the next load', async () => {
    const live = await liveDoc();
    const file = lineIndexPath(lineIndexDir(path.join(work, 'data'), prefix), live.indices!.events!);
    const bytes = await readFile(file);
    bytes[HEADER_BYTES + 100]! ^= 0xff;
    await writeFile(file, bytes);
    const c = path.join(work, 'c');
    await nextOf(path.join(work, 'b'), c, 'c');
    rowHashSearches = 0;
    const summary = await loadBundle(c, options());
    // Without a line index every line whose id came before in the file is sent again (the paged rows' lines too).
    expect(events(summary)).toMatchObject({ action: 'update', withoutLineIndex: 'its sha256 does not match (damaged)', removed: 0 });
    expect(events(summary).written).toBeGreaterThanOrEqual(mustSend(await lines(path.join(work, 'b')), await lines(c)).length);
    expect(rowHashSearches).toBeGreaterThan(1);
    expect((await heldRows()).size).toBe(lastPerId(await lines(c)).size);

    const d = path.join(work, 'd');
    await nextOf(c, d, 'd');
    rowHashSearches = 0;
    const next = await loadBundle(d, options());
    expect(events(next).withoutLineIndex).toBeUndefined();
    expect(events(next).written).toBe(mustSend(await lines(c), await lines(d)).length);
    // None about an unchanged line; one for the ids of the lines sent again (a mirror is told of them: loader/changes.ts).
    expect(rowHashSearches).toBe(1);
  });

  it('missing: the same, saying none was kept', async () => {
    const live = await liveDoc();
    await rm(lineIndexPath(lineIndexDir(path.join(work, 'data'), prefix), live.indices!.events!));
    const e = path.join(work, 'e');
    await nextOf(path.join(work, 'd'), e, 'e');
    const summary = await loadBundle(e, options());
    expect(events(summary)).toMatchObject({ action: 'update', withoutLineIndex: 'none kept' });
    expect((await heldRows()).size).toBe(lastPerId(await lines(e)).size);
  });
});

describe('a follower killed in the middle of an update', () => {
  const followPrefix = uniquePrefix('line-index-follow');
  let follower: ChildProcess | undefined;
  const log: string[] = [];

  function startFollower(source: string): ChildProcess {
    const env = { ES_URL: inject('esUrl'), INDEX_PREFIX: followPrefix, DATA_DIR: path.join(work, 'follow-data'), STORE_TIMEOUT_MS: '60000', LOG_LEVEL: 'warn' };
    return spawnFollower(source, env, { onLine: (line) => log.push(line) });
  }

  async function until(what: string, test: () => boolean | Promise<boolean>, ms = 90_000): Promise<void> {
    const end = Date.now() + ms;
    while (!(await test())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}; follower said:\n${log.join('\n')}`);
      await sleep(100);
    }
  }

  afterAll(async () => {
    follower?.kill('SIGKILL');
    await deleteIndices(client, followPrefix);
  });

  it('leaves the live generation as it was, and takes the export in when started again', async () => {
    const first = path.join(work, 'follow-a');
    const next = path.join(work, 'follow-b');
    const published = path.join(work, 'published');
    // Enough events to be updated rather than built (plan.ts UPDATE_MIN_ROWS).
    await writeBundle(first, { scale: 2, seed: 8, eventsPerEntity: 300 });
    await writeNextExport(first, next, {
      events: async function* (rows) {
        let top = true;
        for await (const row of rows) {
          if (top) for (let i = 0; i < 10; i++) yield { ...row, id: `${row.id}-next-${i}` };
          top = false;
          yield row;
        }
      },
    });
    const server = await startStaticServer(published);
    try {
      await publishBundle(first, published);
      follower = startFollower(`${server.url}/`);
      await until('the first bundle live', () => log.some((l) => / is live as generation /.test(l)));
      const before = await liveDoc(followPrefix);

      // The next export's events stall half-way: the follower is then in the middle of its update.
      server.inject('events.jsonl', { kind: 'stall' });
      server.inject('events.jsonl.gz', { kind: 'stall' });
      await publishBundle(next, published);
      await until('the update under way', () => log.some((l) => /events: update \(line index\)/.test(l)) && server.requests.some((r) => /events\.jsonl(\.gz)?$/.test(r.path) && r.status === 200));
      await sleep(500);
      follower.kill('SIGKILL');
      await new Promise((resolve) => follower!.once('exit', resolve));

      const after = await liveDoc(followPrefix);
      expect(after.generation).toBe(before.generation);
      expect((await client.count({ index: aliasName(followPrefix, 'events') })).count).toBe(before.counts.events);

      log.length = 0;
      follower = startFollower(`${server.url}/`);
      const expected = lastPerId((await readAllRows(next, 'events.jsonl')).map((r) => JSON.stringify(r)));
      // Its log line comes once the load is done, the generations it replaced pruned.
      await until('the next export live', () => log.some((l) => /: loaded: .* is live as generation /.test(l)));
      const live = await liveDoc(followPrefix);
      expect(live.counts.events).toBe(expected.size);
      expect((await client.count({ index: aliasName(followPrefix, 'events') })).count).toBe(expected.size);
      expect(log.some((l) => /events: update \(line index\)/.test(l))).toBe(true);
      // What the killed load left is gone once the next load went live: its index and its unfinished line index.
      const indices = Object.keys(await client.indices.get({ index: `${followPrefix}-events-*` }));
      expect(indices.sort()).toEqual([before.indices!.events!, live.indices!.events!].sort());
      const dir = lineIndexDir(path.join(work, 'follow-data'), followPrefix);
      expect(existsSync(dir) && readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    } finally {
      follower?.kill('SIGTERM');
      await server.close();
    }
  }, 240_000);
});
