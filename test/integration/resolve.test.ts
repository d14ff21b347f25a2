/**
 * `/v1/resolve/{value}` against a real Elasticsearch: a sample of every kind of identifier of the
 * bundle — entity ids and slugs, addresses, killmails, event ids and transaction digests,
 * sources, artefact ids and sha256s, chain object ids and object ids — answers exactly the
 * records the bundle files name by it (computed here from the files), in one search; a value
 * nothing holds answers an empty list; a value that cannot be an id answers 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAllRows } from '../../generator/read-bundle.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';

type Row = Record<string, any>;
type Expected = { type: string; id: string };

let gw: TestGateway;
const rows: Record<string, Row[]> = {};

beforeAll(async () => {
  gw = await startTestGateway({ name: 'resolve', scale: 2, seed: 47 });
  for (const file of ['entities', 'facts', 'killmails', 'events', 'sources', 'source_artefacts', 'chain_objects']) rows[file] = await readAllRows(gw.bundleDir, `${file}.jsonl`);
}, 300_000);

afterAll(() => gw?.close());

const isAddress = (v: unknown): v is string => typeof v === 'string' && /^0x[0-9a-f]{1,64}$/i.test(v);

/** What the files name by `value`: every record of every file whose identifying field holds it. */
function expectedOf(value: string): Expected[] {
  const found: Expected[] = [];
  const add = (type: string, id: string) => {
    if (!found.some((f) => f.type === type && f.id === id)) found.push({ type, id });
  };
  for (const r of rows.entities!) if (r.id === value || r.slug === value) add('entity', r.id);
  for (const r of rows.facts!) if (String(r.key).endsWith('_address') && isAddress(r.value) && isAddress(value) && r.value.toLowerCase() === value.toLowerCase()) add('entity', r.entityId);
  for (const r of rows.killmails!) if (r.id === value) add('killmail', r.id);
  for (const r of rows.events!) if (r.id === value || r.transactionDigest === value) add('event', r.id);
  for (const r of rows.sources!) if (r.id === value) add('source', r.id);
  for (const r of rows.source_artefacts!) if (r.id === value || r.sha256 === value) add('artefact', r.id);
  for (const r of rows.chain_objects!) if (r.id === value || r.objectId === value) add('chain_object', r.id);
  return found;
}

const HREF: Record<string, string> = { entity: 'entities', killmail: 'killmails', event: 'events', source: 'sources', artefact: 'artefacts', chain_object: 'chain-objects' };

/** Requests the gateway made to Elasticsearch's row indices so far (its own metric; the live generation and the follower state a scrape reads left out). */
async function esRequests(): Promise<number> {
  const text = (await gw.get('/v1/metrics')).text;
  return [...text.matchAll(/^\w+_elasticsearch_request_duration_seconds_count\{([^}]*)\} (\d+)/gm)]
    .filter((m) => !/index="(meta|state)"/.test(m[1]!))
    .reduce((n, m) => n + Number(m[2]), 0);
}

/** A few values of each kind, spread over the file. */
function sample<T>(list: T[], count = 4): T[] {
  if (list.length <= count) return list;
  return Array.from({ length: count }, (_, i) => list[Math.floor((i * (list.length - 1)) / (count - 1))]!);
}

describe('/v1/resolve/{value}', () => {
  it('answers every kind of identifier of the bundle with exactly the records the files name by it, in one search', async () => {
    const addresses = rows.facts!.filter((r) => String(r.key).endsWith('_address') && isAddress(r.value)).map((r) => r.value as string);
    const digests = rows.events!.map((r) => r.transactionDigest).filter(Boolean) as string[];
    const values: [string, string][] = [
      ...sample(rows.entities!).map((r) => ['entity id', r.id] as [string, string]),
      ...sample(rows.entities!).map((r) => ['slug', r.slug] as [string, string]),
      ...sample(addresses).map((a) => ['address', a] as [string, string]),
      ...sample(addresses).map((a) => ['address in capitals', `0x${a.slice(2).toUpperCase()}`] as [string, string]),
      ...sample(rows.killmails!).map((r) => ['killmail', r.id] as [string, string]),
      ...sample(rows.events!).map((r) => ['event', r.id] as [string, string]),
      ...sample(digests).map((d) => ['transaction digest', d] as [string, string]),
      ...sample(rows.sources!).map((r) => ['source', r.id] as [string, string]),
      ...sample(rows.source_artefacts!).map((r) => ['artefact', r.id] as [string, string]),
      ...sample(rows.source_artefacts!.filter((r) => r.sha256)).map((r) => ['artefact sha256', r.sha256] as [string, string]),
      ...sample(rows.chain_objects!).map((r) => ['chain object', r.id] as [string, string]),
      ...sample(rows.chain_objects!).map((r) => ['object id', r.objectId] as [string, string]),
    ];
    expect(addresses.length, 'the bundle has addresses').toBeGreaterThan(0);
    for (const kind of ['entity id', 'address', 'killmail', 'transaction digest', 'artefact sha256', 'object id']) expect(values.some(([k]) => k === kind), kind).toBe(true);
    await esRequests(); // the first scrape counts rows
    for (const [kind, value] of values) {
      const before = await esRequests();
      const res = await gw.get(`/v1/resolve/${encodeURIComponent(value)}`);
      expect(res.status, `${kind} ${value}`).toBe(200);
      expect(await esRequests(), `${kind} ${value}: one search`).toBe(before + 1);
      const expected = expectedOf(value);
      expect(expected.length, `${kind} ${value} names something`).toBeGreaterThan(0);
      const answered = res.body.data as { type: string; id: string; href: string; matched: string }[];
      expect(answered.map(({ type, id }) => ({ type, id })).sort(byKey), `${kind} ${value}`).toEqual(expected.sort(byKey));
      for (const record of answered) expect(record.href).toBe(`/v1/${HREF[record.type]}/${encodeURIComponent(record.id)}`);
    }
  });

  it('links records that answer at their href', async () => {
    for (const value of [rows.chain_objects![0]!.id, rows.entities![0]!.slug, rows.source_artefacts![0]!.id]) {
      const [record] = (await gw.get(`/v1/resolve/${encodeURIComponent(value)}`)).body.data;
      const res = await gw.get(record.href);
      expect(res.status, record.href).toBe(200);
      expect(res.body.data.id).toBe(record.id);
    }
  });

  it('says which field matched: a slug, a digest and an address are not ids', async () => {
    const entity = rows.entities!.find((r) => r.slug !== r.id)!;
    expect((await gw.get(`/v1/resolve/${encodeURIComponent(entity.slug)}`)).body.data).toEqual([{ type: 'entity', id: entity.id, href: `/v1/entities/${encodeURIComponent(entity.id)}`, matched: 'slug' }]);
    const event = rows.events!.find((r) => r.transactionDigest)!;
    const byDigest = (await gw.get(`/v1/resolve/${encodeURIComponent(event.transactionDigest)}`)).body.data;
    expect(new Set(byDigest.map((r: { matched: string }) => r.matched))).toEqual(new Set(['transactionDigest']));
  });

  it('answers an empty list for a value that names nothing, and 400 for one that cannot be an id', async () => {
    const none = await gw.get('/v1/resolve/character:stillness:no-such-id');
    expect(none.status).toBe(200);
    expect(none.body.data).toEqual([]);
    expect(expectedOf('character:stillness:no-such-id')).toEqual([]);
    for (const bad of ['two%20words', 'x'.repeat(601)]) {
      const res = await gw.get(`/v1/resolve/${bad}`);
      expect(res.status, bad.slice(0, 20)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'bad_request', details: { parameter: 'value' } });
    }
  });
});

const byKey = (a: Expected, b: Expected) => `${a.type} ${a.id}`.localeCompare(`${b.type} ${b.id}`);
