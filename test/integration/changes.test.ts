/**
 * Rows that left, and rows that changed against a real Elasticsearch: a mirror that
 * walks `since_indexed` with `include=removed` across exports that add, change and remove rows
 * ends equal to the last export, row for row; a removed record answers 410 with `removedAt`
 * (404 stays for ids never seen); a stream with `include=removed` sends the same changes; a
 * rollback takes them back. Expectations come from the export files.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeNextExport } from '../../generator/next-export.ts';
import { type BundleRow, readAllRows } from '../../generator/read-bundle.ts';
import { rollback } from '../../loader/rollback.ts';
import { createClient } from '../../src/search/client.ts';
import { inject } from 'vitest';
import { lastWins } from '../support/expect.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { openSse } from '../../harness/sse.ts';

let gw: TestGateway;
let work: string;
/** Each export's rows, by file; the instants each generation made visible. */
const exports: Rows[] = [];
type Rows = { events: BundleRow[]; killmails: BundleRow[]; entities: BundleRow[] };
const through: string[] = [];
const removed = { events: [] as string[], killmails: [] as string[], entities: [] as string[] };
const changed = { events: [] as string[], killmails: [] as string[] };

async function rowsOf(dir: string): Promise<Rows> {
  // The lists read the default environment.
  const read = async (file: string) => lastWins(await readAllRows(dir, file), (r) => r.id).filter((r) => r.environment === 'stillness');
  return { events: await read('events.jsonl'), killmails: await read('killmails.jsonl'), entities: await read('entities.jsonl') };
}

async function indexedThrough(): Promise<string> {
  return (await gw.get('/v1/events?limit=1')).body.meta.indexedThrough;
}

/** A walk of a timeline with include=removed from `since` (exclusive), every page. */
async function walk(collection: 'events' | 'killmails', since?: string): Promise<any[]> {
  const rows: any[] = [];
  const base = `/v1/${collection}?cycles=all&sort=indexedAt:asc&include=removed&limit=37${since ? `&since_indexed=${since}` : ''}`;
  let url = base;
  for (;;) {
    const res = await gw.get(url);
    expect(res.status, JSON.stringify(res.body?.error)).toBe(200);
    rows.push(...res.body.data);
    if (!res.body.nextCursor) return rows;
    url = `${base}&cursor=${encodeURIComponent(res.body.nextCursor)}`;
  }
}

/** A mirror applies a walk: a tombstone deletes, any other row is put as it is. */
function apply(mirror: Map<string, any>, rows: any[]): void {
  for (const row of rows) {
    if (row.removed === true) mirror.delete(row.id);
    else mirror.set(row.id, row);
  }
}

beforeAll(async () => {
  gw = await startTestGateway({ name: 'changes', scale: 3, seed: 50 });
  work = await mkdtemp(path.join(tmpdir(), 'changes-'));
  exports.push(await rowsOf(gw.bundleDir));
  through.push(await indexedThrough());
  // Two next exports, each removing, changing and adding rows of events and killmails, and removing entities.
  let from = gw.bundleDir;
  for (const round of [1, 2]) {
    const to = path.join(work, `export-${round}`);
    const gone = (list: string[], n: number, rows: BundleRow[]) => {
      const ids = rows.filter((_, i) => i % 7 === round).slice(0, n).map((r) => r.id);
      list.push(...ids);
      return new Set(ids);
    };
    const previous = exports.at(-1)!;
    const goneEvents = gone(removed.events, 3, previous.events);
    const goneKillmails = gone(removed.killmails, 2, previous.killmails);
    const referenced = new Set(previous.killmails.flatMap((k) => [k.systemId, k.victimCharacterId, k.killerCharacterId, k.reporterCharacterId]));
    const goneEntities = gone(removed.entities, 2, previous.entities.filter((e) => !referenced.has(e.id) && e.entityType !== 'tribe'));
    const changedEvents = previous.events.filter((r, i) => i % 11 === round && !goneEvents.has(r.id)).slice(0, 2).map((r) => r.id);
    const changedKillmails = previous.killmails.filter((r, i) => i % 5 === round && !goneKillmails.has(r.id)).slice(0, 1).map((r) => r.id);
    changed.events.push(...changedEvents);
    changed.killmails.push(...changedKillmails);
    const edit = (goneIds: Set<string>, changedIds: string[], change: (row: BundleRow) => BundleRow, tag: string) =>
      async function* (rows: AsyncIterable<BundleRow>) {
        const all: BundleRow[] = [];
        for await (const row of rows) all.push(row);
        // New rows on top: copies of the newest under new ids, a second later.
        for (let i = 0; i < 3; i += 1) yield { ...all[i]!, id: `${all[i]!.id}:${tag}`, occurredAt: new Date(Date.parse(all[0]!.occurredAt) + 1000).toISOString() };
        for (const row of all) if (!goneIds.has(row.id)) yield changedIds.includes(row.id) ? change(row) : row;
      };
    await writeNextExport(from, to, {
      events: edit(goneEvents, changedEvents, (row) => ({ ...row, module: `changed-${round}` }), `new-${round}`),
      killmails: edit(goneKillmails, changedKillmails, (row) => ({ ...row, lossType: `Changed${round}` }), `new-${round}`),
      entities: async function* (rows) {
        for await (const row of rows) if (!goneEntities.has(row.id)) yield row;
      },
    });
    await gw.loadNext(to);
    exports.push(await rowsOf(to));
    through.push(await indexedThrough());
    from = to;
  }
}, 300_000);

afterAll(() => gw?.close());

describe('a mirror that walks since_indexed with include=removed', () => {
  it.each(['events', 'killmails'] as const)('ends equal to the last export, row for row (%s)', async (collection) => {
    const mirror = new Map<string, any>();
    // As a mirror would: first the whole list once it was live, then each later walk from where the last ended.
    const first = await walk(collection);
    apply(mirror, first);
    const last = exports.at(-1)![collection];
    expect([...mirror.keys()].sort()).toEqual(last.map((r) => r.id).sort());
    for (const row of last) {
      const held = mirror.get(row.id);
      if (collection === 'events') expect(held, row.id).toEqual(row);
      else expect(held.lossType, row.id).toBe(row.lossType);
    }
  });

  it.each(['events', 'killmails'] as const)('a walk from each export on meets every row that left since and every row that changed (%s)', async (collection) => {
    for (const [n, since] of through.slice(0, -1).entries()) {
      const rows = await walk(collection, since);
      const last = new Map(exports.at(-1)![collection].map((r) => [r.id, r]));
      // Removed in a later export and not back since: a tombstone, once.
      const left = exports.slice(n, -1).flatMap((e, i) => e[collection].filter((r) => !exports[n + i + 1]![collection].some((x) => x.id === r.id)).map((r) => r.id));
      const tombstones = rows.filter((r) => r.removed === true);
      expect(tombstones.map((r) => r.id).sort(), `since export ${n}`).toEqual(left.filter((id) => !last.has(id)).sort());
      for (const tombstone of tombstones) expect(tombstone.removedAt > since).toBe(true);
      // Changed or added since: delivered as it is now.
      const before = new Map(exports[n]![collection].map((r) => [r.id, JSON.stringify(r)]));
      const delivered = new Set(rows.filter((r) => r.removed !== true).map((r) => r.id));
      for (const [id, row] of last) if (before.get(id) !== JSON.stringify(row)) expect(delivered.has(id), `${id} since export ${n}`).toBe(true);
    }
  });
});

describe('a removed record', () => {
  it('answers 410 with removedAt; an id never seen stays a 404', async () => {
    for (const [collection, id] of [['events', removed.events[0]!], ['killmails', removed.killmails[0]!], ['entities', removed.entities[0]!]] as const) {
      const res = await gw.get(`/v1/${collection}/${encodeURIComponent(id)}`);
      expect(res.status, id).toBe(410);
      expect(res.body.error.code).toBe('gone');
      expect(res.body.error.details.removedAt, id).toBe(through[1]);
    }
    const entity = exports[0]!.entities.find((e) => e.id === removed.entities[0])!;
    expect((await gw.get(`/v1/entities/${encodeURIComponent(String(entity.slug))}`)).status).toBe(410);
    expect((await gw.get('/v1/events/event:never:0')).status).toBe(404);
    expect((await gw.get('/v1/killmails/killmail:stillness:never')).status).toBe(404);
  });

  it('is refused with group_by', async () => {
    const res = await gw.get('/v1/events?include=removed&group_by=kind');
    expect(res.status).toBe(400);
  });
});

describe('a stream with include=removed', () => {
  it('sends the rows that left and changed since, as the walk does', async () => {
    const since = through[0]!;
    const expected = (await walk('killmails', since)).map((r) => `${r.id}:${r.removed === true}`);
    const stream = await openSse(`${gw.url}/v1/killmails/stream?cycles=all&include=removed&since_indexed=${since}`);
    try {
      await stream.until((s) => s.rows().length >= expected.length, `${expected.length} rows`, 10_000);
      expect(stream.rows().map((r) => `${r.id}:${r.removed === true}`)).toEqual(expected);
    } finally {
      stream.close();
    }
  });
});

describe('a rollback', () => {
  it('takes back the changes of the generation it leaves', async () => {
    const client = createClient(inject('esUrl'), 30_000);
    try {
      const { to } = await rollback(client, gw.prefix);
      for (let waited = 0; waited < 10_000; waited += 100) {
        if ((await gw.get('/v1/ready')).body?.data?.generation === to.generation) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const rows = await walk('events', through[1]);
      expect(rows.filter((r) => r.removed === true)).toEqual([]);
      expect((await gw.get(`/v1/events/${encodeURIComponent(removed.events.at(-1)!)}`)).status).toBe(200);
    } finally {
      await client.close();
    }
  });
});
