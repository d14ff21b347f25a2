/**
 * Loads that reuse what did not change, against a real Elasticsearch: a next export where only
 * events changed reuses every other index (the very indices the live generation reads) and
 * updates the events index in place of a rebuild — new, changed, removed and late-arriving old
 * rows, checked against the file; rows keep the first-seen instant of the load that first held
 * them; dropping a generation never deletes an index a kept one still reads; in a file that
 * repeats an id the last line wins; `force` rebuilds everything and still carries first-seen instants.
 * A bundle of other data (another seed: rows mostly changed) is built, not updated, file by
 * file as the share of its lines the live index holds says.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Client } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleRow, readRows } from '../../generator/read-bundle.ts';
import { writeBundle } from '../../generator/write-bundle.ts';
import { writeNextExport } from '../../generator/next-export.ts';
import { parseCycleStarts } from '../../src/config.ts';
import { INDICES } from '../../src/indices/all.ts';
import { type GenerationDoc, aliasName } from '../../src/indices/generation.ts';
import { toInstant } from '../../src/time/instant.ts';
import { type LoadOptions, type LoadSummary, loadBundle } from '../../loader/load-bundle.ts';
import { deleteIndices, testClient, uniquePrefix } from '../support/elasticsearch.ts';
import { storedRows } from '../support/stored-rows.ts';

const cycleStarts = parseCycleStarts('5=2026-03-11T09:00:00Z,6=2026-06-25T09:00:00Z');
const prefix = uniquePrefix('incremental');
const otherPrefix = uniquePrefix('incremental-other');
let client: Client;
let work: string;
let bundleA: string;
let bundleB: string;

function options(extra: Partial<LoadOptions> = {}): LoadOptions {
  // Every file is large enough to be updated rather than rebuilt.
  return { client, prefix, dataDir: path.join(work, 'data'), cycleStarts, updateMinRows: 1, ...extra };
}

async function rowsById(dir: string, stem: string): Promise<Map<string, BundleRow>> {
  const rows = new Map<string, BundleRow>();
  for await (const { row } of readRows(dir, `${stem}.jsonl`)) rows.set(row.id, row);
  return rows;
}

async function generation(id: string): Promise<GenerationDoc> {
  const response = await client.search<GenerationDoc>({ index: `${prefix}-meta-*`, query: { term: { generation: id } } });
  return response.hits.hits[0]!._source!;
}

/** Every document of an index: its row and its first-seen instant, by id. */
async function documents(index: string): Promise<Map<string, { row: BundleRow; indexedAt: string }>> {
  const hits = await storedRows(client, {
    index,
    size: 10_000,
    docvalue_fields: [{ field: 'indexedAt', format: 'strict_date_optional_time_nanos' }],
  });
  // Instants as normalized nanosecond text (doc values drop trailing zeros).
  const instant = (value: unknown) => toInstant(value)?.text ?? String(value);
  return new Map(hits.map((hit) => [String(hit.row.id), { row: hit.row as BundleRow, indexedAt: instant(hit.fields.indexedAt?.[0]) }]));
}

async function indexExists(index: string): Promise<boolean> {
  return client.indices.exists({ index });
}

// The next export: 25 new events on top, one late-arriving event older than all, one changed, one gone.
const CHANGED = 1;
const REMOVED = 2;
async function* nextEvents(rows: AsyncIterable<BundleRow>): AsyncGenerator<BundleRow> {
  const all: BundleRow[] = [];
  for await (const row of rows) all.push(row);
  const newest = Date.parse(all[0]!.occurredAt);
  for (let i = 25; i > 0; i -= 1) yield { ...all[i]!, id: `${all[i]!.id}-next`, occurredAt: new Date(newest + i * 60_000).toISOString() };
  for (const [i, row] of all.entries()) {
    if (i === REMOVED) continue;
    yield i === CHANGED ? { ...row, payload: { ...row.payload, revised: true } } : row;
  }
  yield { ...all.at(-1)!, id: 'late-arrival', occurredAt: new Date(Date.parse(all.at(-1)!.occurredAt) - 86_400_000).toISOString() };
}

let first: LoadSummary;
let second: LoadSummary;
let eventsA: Map<string, BundleRow>;

beforeAll(async () => {
  client = testClient();
  work = await mkdtemp(path.join(tmpdir(), 'incremental-'));
  bundleA = path.join(work, 'a');
  bundleB = path.join(work, 'b');
  await writeBundle(bundleA, { scale: 2, seed: 5 });
  await writeNextExport(bundleA, bundleB, { events: nextEvents });
  eventsA = await rowsById(bundleA, 'events');
  first = await loadBundle(bundleA, options());
  second = await loadBundle(bundleB, options());
});

afterAll(async () => {
  await deleteIndices(client, prefix);
  await deleteIndices(client, otherPrefix);
  await client.close();
  await rm(work, { recursive: true, force: true });
});

describe('a next export where only events changed', () => {
  it('reuses the live index of every unchanged file and updates the events index', async () => {
    const before = await generation(first.generation);
    const after = await generation(second.generation);
    for (const result of second.indices) {
      if (result.name === 'events') {
        expect(result.action).toBe('update');
        expect(result.index).not.toBe(before.indices!.events);
      } else {
        expect(result.action, result.name).toBe('reuse');
        expect(after.indices![result.name], result.name).toBe(before.indices![result.name]);
      }
    }
    // Only the events file was read.
    expect(second.files.map((f) => f.file)).toEqual(['events.jsonl']);
    const live = await client.indices.getAlias({ name: aliasName(prefix, 'events') });
    expect(Object.keys(live)).toEqual([after.indices!.events]);
  });

  it('holds exactly the rows of the new file, and wrote only the new and changed ones', async () => {
    const expected = await rowsById(bundleB, 'events');
    const held = await documents(aliasName(prefix, 'events'));
    expect([...held.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [id, row] of expected) expect(held.get(id)!.row, id).toEqual(row);
    const events = second.indices.find((r) => r.name === 'events')!;
    expect(events.written).toBe(25 + 1 + 1);
    expect(events.removed).toBe(1);
    expect(second.counts.events).toBe(expected.size);
  });

  it('keeps each row the first-seen instant of the load that first held it', async () => {
    const [before, after] = [await generation(first.generation), await generation(second.generation)];
    expect(after.indexedAt! > before.indexedAt!).toBe(true);
    const held = await documents(aliasName(prefix, 'events'));
    for (const [id, { indexedAt }] of held) {
      // A changed row was seen before: it keeps its instant.
      expect(indexedAt, id).toBe(eventsA.has(id) ? before.indexedAt : after.indexedAt);
    }
    expect(held.get('late-arrival')!.indexedAt).toBe(after.indexedAt);
  });

  it('keeps the previous generation whole for rollback (the removed row is still in its index)', async () => {
    const before = await generation(first.generation);
    const previous = await documents(before.indices!.events!);
    expect(previous.size).toBe(eventsA.size);
  });
});

describe('dropping generations', () => {
  it('never deletes an index a kept generation still reads', async () => {
    const bundleC = path.join(work, 'c');
    // The oldest killmail leaves the export.
    const dropLast = async function* (rows: AsyncIterable<BundleRow>) {
      let held: BundleRow | undefined;
      for await (const row of rows) {
        if (held) yield held;
        held = row;
      }
    };
    await writeNextExport(bundleB, bundleC, { killmails: dropLast }, 7_200_000);
    const third = await loadBundle(bundleC, options());
    expect(third.dropped).toEqual([first.generation]);
    const firstDoc = first.indices;
    const reused = (await generation(third.generation)).indices!;
    for (const result of firstDoc) {
      const stillRead = Object.values(reused).includes(result.index) || Object.values((await generation(second.generation)).indices!).includes(result.index);
      expect(await indexExists(result.index), result.index).toBe(stillRead);
    }
    // Entities were built by the first load and are read by the third.
    expect(reused.entities).toBe(first.indices.find((r) => r.name === 'entities')!.index);
    expect(await indexExists(reused.entities!)).toBe(true);
  });
});

describe('rebuilds', () => {
  it('updates a file that repeats an id: the last line of the id wins', async () => {
    const bundleD = path.join(work, 'd');
    let repeated: BundleRow | undefined;
    await writeNextExport(bundleB, bundleD, {
      events: async function* (rows) {
        let firstRow: BundleRow | undefined;
        for await (const row of rows) {
          firstRow ??= row;
          yield row;
        }
        // The first row, unchanged, comes first; a changed copy of it comes last.
        repeated = { ...firstRow!, payload: { repeated: true } };
        yield repeated;
      },
    }, 10_800_000);
    const summary = await loadBundle(bundleD, options());
    expect(summary.indices.find((r) => r.name === 'events')!.action).toBe('update');
    const expected = await rowsById(bundleD, 'events');
    const held = await documents(aliasName(prefix, 'events'));
    expect(held.size).toBe(expected.size);
    expect(held.get(repeated!.id)!.row).toEqual(repeated);
  });

  it('builds every index when forced, still carrying first-seen instants', async () => {
    const live = (await client.search<GenerationDoc>({ index: aliasName(prefix, 'meta') })).hits.hits[0]!._source!;
    const before = await documents(aliasName(prefix, 'events'));
    const forced = await loadBundle(path.join(work, 'd'), options({ force: true }));
    expect(forced.indices.every((r) => r.action === 'build')).toBe(true);
    const after = await documents(aliasName(prefix, 'events'));
    for (const [id, { indexedAt }] of after) expect(indexedAt, id).toBe(before.get(id)!.indexedAt);
    expect(live.generation).not.toBe(forced.generation);
  });
});

describe('a bundle of other data', () => {
  /** A file's lines, read from its plain or `.gz` copy. */
  async function linesOf(dir: string, file: string): Promise<string[]> {
    const plain = path.join(dir, file);
    const bytes = existsSync(plain) ? await readFile(plain) : gunzipSync(await readFile(`${plain}.gz`));
    return bytes.toString('utf8').split('\n').filter((line) => line !== '');
  }

  it('builds each file whose lines mostly changed, reuses an unchanged one', async () => {
    const other = path.join(work, 'other-seed');
    await writeBundle(other, { scale: 2, seed: 6 });
    await loadBundle(bundleA, options({ prefix: otherPrefix }));
    const summary = await loadBundle(other, options({ prefix: otherPrefix }));
    const actions = Object.fromEntries(summary.indices.map((r) => [r.name, r.action]));
    let built = 0;
    for (const description of INDICES) {
      const file = `${description.files[0]}.jsonl`;
      const [before, after] = [await linesOf(bundleA, file).catch(() => undefined), await linesOf(other, file).catch(() => undefined)];
      if (!before || !after || after.length === 0) continue;
      const held = new Set(before);
      const share = after.filter((line) => held.has(line)).length / after.length;
      // Unchanged files are reused; an index fed by other changed files is built whatever its own.
      if (share === 1 && before.length === after.length) expect(actions[description.name], description.name).toBe('reuse');
      else if (description.dependsOn) expect(actions[description.name], description.name).toBe('build');
      // Clear cases only: the plan estimates from a sample.
      else if (share < 0.3) {
        expect(actions[description.name], `${description.name}: ${share} of its lines held`).toBe('build');
        built += 1;
      } else if (share > 0.7) expect(actions[description.name], `${description.name}: ${share} of its lines held`).toBe('update');
    }
    expect(built).toBeGreaterThan(3);
    const expected = await rowsById(other, 'events');
    expect((await client.count({ index: aliasName(otherPrefix, 'events') })).count).toBe(expected.size);
  }, 300_000);
});
