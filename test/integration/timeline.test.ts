/**
 * `/v1/events` and `/v1/killmails` against a real Elasticsearch loaded with a generated bundle.
 * Every expectation is computed here from the bundle files: scope, filters, NPC proof, order
 * (newest first as instants, ties by id descending) and the actor names.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleRow, readAllRows, readManifest } from '../../generator/read-bundle.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { type Scope, SCOPES, cycleOfInstant, inScope, newestFirst, walk } from '../support/expect.ts';

let gw: TestGateway;
let current: number;
let events: BundleRow[];
let killmails: BundleRow[];
let entities: Map<string, BundleRow>;
let npcByRelation: Set<string>;

/** Last row wins, as the export format says for repeated ids. */
function lastById(rows: BundleRow[], id: (row: BundleRow) => string): BundleRow[] {
  return [...new Map(rows.map((row) => [id(row), row])).values()];
}

beforeAll(async () => {
  gw = await startTestGateway({ name: 'timeline', scale: 2, seed: 7 });
  const manifest = await readManifest(gw.bundleDir);
  current = Math.max(...manifest.cycles);
  events = lastById(await readAllRows(gw.bundleDir, 'events.jsonl'), (r) => r.id);
  killmails = lastById(await readAllRows(gw.bundleDir, 'killmails.jsonl'), (r) => r.id);
  entities = new Map((await readAllRows(gw.bundleDir, 'entities.jsonl')).map((r) => [r.id, r]));
  const relations = await readAllRows(gw.bundleDir, 'relations.jsonl');
  npcByRelation = new Set(relations.filter((r) => r.predicate === 'killer' && r.objectEntityId.startsWith('enemy:')).map((r) => r.subjectEntityId));
}, 300_000);

afterAll(() => gw?.close());

const eventCycle = (row: BundleRow) => (Number.isInteger(row.cycle) && row.cycle >= 1 ? row.cycle : cycleOfInstant(row.occurredAt));
const ids = (rows: BundleRow[]) => rows.map((row) => row.id);

function expectedEvents(scope: Scope, environment = 'stillness', where: (row: BundleRow) => boolean = () => true): string[] {
  const rows = events.filter((r) => r.environment === environment && inScope(eventCycle(r), scope, current) && where(r));
  return ids(newestFirst(rows, (r) => r.occurredAt, (r) => r.id));
}

function expectedKillmails(scope: Scope, where: (row: BundleRow) => boolean = () => true): string[] {
  const rows = killmails.filter((r) => r.environment === 'stillness' && inScope(cycleOfInstant(r.occurredAt), scope, current) && where(r));
  return ids(newestFirst(rows, (r) => r.occurredAt, (r) => r.id));
}

describe('/v1/events', () => {
  it('walks the default scope (current cycle + uncycled), newest first, each event once', async () => {
    const expected = expectedEvents('default');
    expect(expected.length).toBeGreaterThan(200);
    const { rows, pages } = await walk(gw, '/v1/events', 97);
    expect(ids(rows)).toEqual(expected);
    expect(pages).toBe(Math.ceil(expected.length / 97));
  });

  it('answers a first page asked again (its count then known, nothing counted) as the first time: rows, count, cursor', async () => {
    const expected = expectedEvents('default', 'stillness', (r) => r.kind === events[0]!.kind);
    for (const limit of [7, 3]) {
      const first = await gw.get(`/v1/events?kind=${events[0]!.kind}&limit=${limit}`);
      const again = await gw.get(`/v1/events?kind=${events[0]!.kind}&limit=${limit}`);
      expect(again.body).toEqual(first.body);
      expect(again.body.data.map((row: BundleRow) => row.id)).toEqual(expected.slice(0, limit));
      expect(again.body.meta).toMatchObject({ count: expected.length, countIsExact: true });
    }
  });

  it.each(SCOPES.filter(([query]) => query !== ''))('scopes %s', async (query, scope) => {
    const { rows } = await walk(gw, `/v1/events?${query}`, 200);
    expect(ids(rows)).toEqual(expectedEvents(scope));
  });

  it('orders rows with equal instants by id, and compares instants, not text', async () => {
    const all = expectedEvents('all');
    const instants = events.map((r) => r.occurredAt as string);
    // The bundle must hold ties and mixed fractional precision, or this test proves nothing.
    expect(new Set(instants).size).toBeLessThan(instants.length);
    expect(instants.some((t) => /\.\d{1,2}Z$/.test(t)) && instants.some((t) => /\.\d{3,}Z$/.test(t))).toBe(true);
    const { rows } = await walk(gw, '/v1/events?cycles=all', 200);
    expect(ids(rows)).toEqual(all);
  });

  it.each([
    ['kind', 'kind'],
    ['module', 'module'],
    ['package_id', 'packageId'],
    ['transaction_digest', 'transactionDigest'],
    ['source_id', 'sourceId'],
  ])('filters %s exactly', async (param, field) => {
    const value = events.find((r) => r.environment === 'stillness' && r[field] !== undefined)![field] as string;
    const { rows } = await walk(gw, `/v1/events?cycles=all&${param}=${encodeURIComponent(value)}`, 200);
    expect(rows.length).toBeGreaterThan(0);
    expect(ids(rows)).toEqual(expectedEvents('all', 'stillness', (r) => r[field] === value));
  });

  it('filters by q on whole words of the kind, module and ids', async () => {
    const { rows } = await walk(gw, '/v1/events?cycles=all&q=created', 200);
    expect(ids(rows)).toEqual(expectedEvents('all', 'stillness', (r) => /(^|[^a-z0-9])created($|[^a-z0-9])/i.test(`${r.kind} ${r.module ?? ''}`)));
  });

  it('treats an unknown environment as data: an empty list', async () => {
    const { status, body } = await gw.get('/v1/events?environment=nowhere');
    expect(status).toBe(200);
    expect(body.data).toEqual([]);
  });

  it('returns one event by id, as exported, and 404 for an unknown id', async () => {
    const row = events.at(-1)!;
    const { status, body } = await gw.get(`/v1/events/${encodeURIComponent(row.id)}`);
    expect(status).toBe(200);
    expect(body.data).toEqual(row);
    const missing = await gw.get('/v1/events/event:nope:0');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toEqual({ code: 'not_found', message: 'Event not found.' });
  });
});

describe('/v1/killmails', () => {
  const npc = (r: BundleRow) => Boolean(r.killerTypeId || r.killer?.typeId || r.killer?.isNpc === true || npcByRelation.has(r.id));

  it('walks newest first with cycles derived from occurredAt, and leaves raw out of list rows', async () => {
    const { rows } = await walk(gw, '/v1/killmails?cycles=all', 5);
    expect(ids(rows)).toEqual(expectedKillmails('all'));
    expect(rows.every((r) => !('raw' in r))).toBe(true);
    const scoped = await walk(gw, '/v1/killmails', 200);
    expect(ids(scoped.rows)).toEqual(expectedKillmails('default'));
  });

  it('splits killmails into proven NPC kills and the others', async () => {
    const yes = await walk(gw, '/v1/killmails?cycles=all&npc=true', 200);
    const no = await walk(gw, '/v1/killmails?cycles=all&npc=false', 200);
    expect(ids(yes.rows)).toEqual(expectedKillmails('all', npc));
    expect(ids(no.rows)).toEqual(expectedKillmails('all', (r) => !npc(r)));
    // NPC through a sourced relation only, and a raw killer_id that is not a type id: both must occur.
    expect(killmails.some((r) => npcByRelation.has(r.id) && !r.killerTypeId)).toBe(true);
    expect(killmails.some((r) => !npc(r) && JSON.stringify(r.raw ?? {}).includes('killer_id'))).toBe(true);
  });

  it.each([
    ['system', (r: BundleRow) => r.systemId],
    ['victim', (r: BundleRow) => r.victimCharacterId],
    ['reporter', (r: BundleRow) => r.reporterCharacterId],
    ['killer', (r: BundleRow) => r.killerCharacterId],
    ['killer', (r: BundleRow) => r.killerTypeId],
    ['loss_type', (r: BundleRow) => (r.lossType === 'Structure' ? r.lossType : undefined)],
  ])('filters %s by id', async (param, valueOf) => {
    const value = valueOf(killmails.find((r) => valueOf(r) !== undefined)!) as string;
    const { rows } = await walk(gw, `/v1/killmails?cycles=all&${param}=${encodeURIComponent(value)}`, 200);
    const matches = (r: BundleRow) =>
      param === 'killer' ? [r.killerCharacterId, r.killerTypeId, r.killer?.typeId, r.killer?.entityId].includes(value) : valueOf(r) === value || r[param]?.entityId === value;
    expect(rows.length).toBeGreaterThan(0);
    expect(ids(rows)).toEqual(expectedKillmails('all', matches));
  });

  it('fills missing actor names from entity records only', async () => {
    const { rows } = await walk(gw, '/v1/killmails?cycles=all', 200);
    const byId = new Map(killmails.map((r) => [r.id, r]));
    let filled = 0;
    for (const row of rows) {
      const exported = byId.get(row.id)!;
      const killerId = exported.killerTypeId ? `enemy:${exported.environment}:type:${exported.killerTypeId}` : exported.killerCharacterId;
      for (const [name, id] of [['systemName', exported.systemId], ['killerName', killerId]] as const) {
        const entity = id ? entities.get(id) : undefined;
        const label = entity?.displayName ?? entity?.name;
        if (exported[name] !== undefined) expect(row[name]).toBe(exported[name]);
        else if (label !== undefined && label !== id) {
          expect(row[name]).toBe(label);
          filled += 1;
        } else expect(row[name]).toBeUndefined();
      }
    }
    expect(filled).toBeGreaterThan(0);
  });

  it('returns the full killmail with raw, and the reported record on /raw', async () => {
    const row = killmails.find((r) => r.raw !== undefined)!;
    const detail = await gw.get(`/v1/killmails/${encodeURIComponent(row.id)}`);
    expect(detail.status).toBe(200);
    expect(detail.body.data.raw).toEqual(row.raw);
    expect(detail.body.data.summaryText).toEqual(row.summaryText);
    const raw = await gw.get(`/v1/killmails/${encodeURIComponent(row.id)}/raw`);
    const semantic = ['kind', 'system', 'victim', 'killer', 'reporter', 'summaryText', 'sources', 'warnings'];
    expect(raw.body.data).toEqual(Object.fromEntries(Object.entries(row).filter(([k]) => !semantic.includes(k))));
    const missing = await gw.get('/v1/killmails/killmail:stillness:0/raw');
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toBe('Killmail not found.');
  });

  it.each(['1', 'TRUE', 'yes', ''])('refuses npc=%s other than true or false (empty = absent)', async (value) => {
    const { status, body } = await gw.get(`/v1/killmails?npc=${value}`);
    if (value === '') return expect(status).toBe(200);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'bad_request', details: { parameter: 'npc' } });
  });

  it('refuses a cursor of /v1/events and one whose filters changed', async () => {
    const events = await gw.get('/v1/events?limit=1');
    const wrongRoute = await gw.get(`/v1/killmails?cursor=${events.body.nextCursor}`);
    expect(wrongRoute.status).toBe(400);
    expect(wrongRoute.body.error.details).toEqual({ parameter: 'cursor' });
    const first = await gw.get('/v1/killmails?limit=1&npc=true');
    const changed = await gw.get(`/v1/killmails?limit=1&npc=false&cursor=${first.body.nextCursor}`);
    expect(changed.status).toBe(400);
  });
});

describe('edited cursors', () => {
  /** The cursor's payload and MAC, as the README documents them: `<base64url JSON>.<base64url HMAC-SHA256, 16 bytes>`. */
  const split = (cursor: string) => {
    const [payload, tag] = cursor.split('.') as [string, string];
    return { json: JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')), tag };
  };
  const sign = (json: unknown, key: string) => {
    const payload = Buffer.from(JSON.stringify(json)).toString('base64url');
    return `${payload}.${createHmac('sha256', key).update(payload).digest().subarray(0, 16).toString('base64url')}`;
  };
  const EDITS: [string, unknown][] = [['text', 'zzz'], ['null', null], ['a date before 1970', '1969-07-20T20:17:40Z'], ['a date after 2262', '2300-01-01T00:00:00Z'], ['a number', 0]];

  it.each(['/v1/events', '/v1/killmails'])('%s: an edited position with the binding kept is a 400 naming cursor, never a 500', async (route) => {
    const first = await gw.get(`${route}?limit=2`);
    const { json, tag } = split(first.body.nextCursor);
    expect(typeof json.a[0]).toBe('string');
    for (const [name, value] of EDITS) {
      const edited = { ...json, a: [value, ...json.a.slice(1)] };
      const unsigned = `${Buffer.from(JSON.stringify(edited)).toString('base64url')}.${tag}`;
      const res = await gw.get(`${route}?limit=2&cursor=${unsigned}`);
      expect(res.status, name).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'bad_request', details: { parameter: 'cursor' } });
      // Even signed with the gateway's own key, a position its sort cannot hold never reaches Elasticsearch.
      const resigned = await gw.get(`${route}?limit=2&cursor=${sign(edited, gw.config.cursorSecret)}`);
      expect(resigned.status, `${name}, signed`).toBe(400);
      expect(resigned.body.error.details).toEqual({ parameter: 'cursor' });
    }
    // The unedited cursor, re-signed the same way, still pages on: the checks refuse only what is wrong.
    expect((await gw.get(`${route}?limit=2&cursor=${sign(json, gw.config.cursorSecret)}`)).status).toBe(200);
  });

  it('refuses a cursor signed with another key', async () => {
    const { json } = split((await gw.get('/v1/events?limit=2')).body.nextCursor);
    const res = await gw.get(`/v1/events?limit=2&cursor=${sign(json, 'not-the-key')}`);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/altered|not issued here/);
  });
});
