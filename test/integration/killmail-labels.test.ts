/**
 * Killmail labels and proof against a real Elasticsearch: every killmail answers the
 * labels a computation over the bundle files gives (killmails, and the relations that prove NPC
 * kills and tribes), `label=` filters the list, its download and the stream to exactly those, and each proof
 * names the chain event the export names, with its transaction digest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleRow, readAllRows } from '../../generator/read-bundle.ts';
import { lastWins } from '../support/expect.ts';
import { expectedLabels, obj, text } from '../support/killmail-labels.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { openSse } from '../../harness/sse.ts';

let gw: TestGateway;
let killmails: BundleRow[];
/** Killmail id → the labels the files give it. */
const expected = new Map<string, string[]>();
let eventIds: Set<string>;


beforeAll(async () => {
  gw = await startTestGateway({ name: 'killmail-labels', scale: 3, seed: 48 });
  killmails = lastWins(await readAllRows(gw.bundleDir, 'killmails.jsonl'), (r) => r.id);
  const relations = await readAllRows(gw.bundleDir, 'relations.jsonl');
  eventIds = new Set((await readAllRows(gw.bundleDir, 'events.jsonl')).map((r) => String(r.id)));
  for (const [id, labels] of expectedLabels(killmails, relations)) expected.set(id, labels);
}, 300_000);

afterAll(() => gw?.close());

/** Every row of a list, page after page. */
async function all(query: string): Promise<BundleRow[]> {
  const rows: BundleRow[] = [];
  let cursor: string | undefined;
  do {
    const res = await gw.get(`/v1/killmails?${query}&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status, query).toBe(200);
    rows.push(...res.body.data);
    cursor = res.body.nextCursor;
  } while (cursor);
  return rows;
}

const environments = () => [...new Set(killmails.map((r) => String(r.environment)))];

describe('killmail labels and proof', () => {
  it('labels every killmail as the bundle files say, each label on some', async () => {
    for (const label of ['npc', 'structure', 'same_tribe', 'unresolved']) expect([...expected.values()].filter((l) => l.includes(label)).length, label).toBeGreaterThan(0);
    let seen = 0;
    for (const environment of environments()) {
      for (const row of await all(`cycles=all&environment=${environment}`)) {
        expect(row.labels, row.id).toEqual(expected.get(row.id));
        seen += 1;
      }
    }
    expect(seen).toBe(killmails.length);
  });

  it('filters the list and its download by label: exactly the killmails with it, any of several', async () => {
    const stillness = killmails.filter((r) => r.environment === 'stillness');
    for (const label of ['npc', 'structure', 'same_tribe', 'unresolved', 'same_tribe|structure']) {
      const want = stillness.filter((r) => label.split('|').some((l) => expected.get(r.id)!.includes(l))).map((r) => r.id).sort();
      expect((await all(`cycles=all&label=${label}`)).map((r) => r.id).sort(), label).toEqual(want);
      const download = await gw.get(`/v1/killmails?cycles=all&label=${encodeURIComponent(label)}&format=ndjson`);
      expect(download.status).toBe(200);
      expect(download.text.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line).id).sort(), `${label} download`).toEqual(want);
    }
    const grouped = await gw.get('/v1/killmails?cycles=all&group_by=label');
    const counts = Object.fromEntries(grouped.body.data.map((g: { key: string; count: number }) => [g.key, g.count]));
    for (const label of ['npc', 'structure', 'same_tribe', 'unresolved']) expect(counts[label] ?? 0, label).toBe(stillness.filter((r) => expected.get(r.id)!.includes(label)).length);
    const bad = await gw.get('/v1/killmails?label=friendly');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual({ parameter: 'label' });
  });

  it('exclude= leaves out every killmail with any label named, in the list and its download; a label both asked and left out is a 400', async () => {
    const stillness = killmails.filter((r) => r.environment === 'stillness');
    for (const exclude of ['npc', 'npc,structure', 'same_tribe|unresolved']) {
      const out = exclude.split(/[,|]/);
      const want = stillness.filter((r) => !out.some((l) => expected.get(r.id)!.includes(l))).map((r) => r.id).sort();
      expect(want.length, exclude).toBeLessThan(stillness.length);
      expect((await all(`cycles=all&exclude=${encodeURIComponent(exclude)}`)).map((r) => r.id).sort(), exclude).toEqual(want);
      const download = await gw.get(`/v1/killmails?cycles=all&exclude=${encodeURIComponent(exclude)}&format=ndjson`);
      expect(download.text.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line).id).sort(), `${exclude} download`).toEqual(want);
    }
    // With label: those of the one label, less those of the other.
    const both = stillness.filter((r) => expected.get(r.id)!.includes('structure') && !expected.get(r.id)!.includes('npc')).map((r) => r.id).sort();
    expect((await all('cycles=all&label=structure&exclude=npc')).map((r) => r.id).sort()).toEqual(both);
    for (const query of ['label=npc&exclude=structure,npc', 'exclude=friendly', 'exclude=npc,,structure']) {
      const bad = await gw.get(`/v1/killmails?${query}`);
      expect(bad.status, query).toBe(400);
      expect(bad.body.error.details, query).toEqual({ parameter: 'exclude' });
    }
  });

  it('streams only the killmails with the label asked, from the start, each once', async () => {
    const want = killmails.filter((r) => r.environment === 'stillness' && expected.get(r.id)!.includes('same_tribe')).map((r) => r.id).sort();
    const stream = await openSse(`${gw.url}/v1/killmails/stream?cycles=all&label=same_tribe&since_indexed=2000-01-01T00:00:00Z`);
    try {
      expect(stream.status).toBe(200);
      await stream.until((s) => s.rows().length >= want.length, `${want.length} same_tribe killmails`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(stream.rows().map((r: BundleRow) => r.id).sort()).toEqual(want);
      for (const row of stream.rows()) expect(row.labels).toContain('same_tribe');
    } finally {
      stream.close();
    }
  });

  it("proves each killmail by the chain event its export names, and that event's transaction digest", async () => {
    const withEvent = killmails.filter((r) => text(obj(r.raw)?.sourceEventId) && r.environment === 'stillness');
    expect(withEvent.length).toBeGreaterThan(0);
    for (const row of withEvent.slice(0, 20)) {
      const eventId = String(obj(row.raw)!.sourceEventId);
      const res = await gw.get(`/v1/killmails/${encodeURIComponent(row.id)}`);
      expect(res.body.data.proof).toEqual({ eventId, href: `/v1/events/${encodeURIComponent(eventId)}`, transactionDigest: eventId.split(':')[1] });
      if (eventIds.has(eventId)) expect((await gw.get(res.body.data.proof.href)).status).toBe(200);
      const raw = await gw.get(`/v1/killmails/${encodeURIComponent(row.id)}/raw`);
      expect(raw.body.data.labels, 'the raw record is as reported').toBeUndefined();
    }
    const without = killmails.find((r) => !text(obj(r.raw)?.sourceEventId) && r.environment === 'stillness');
    if (without) expect((await gw.get(`/v1/killmails/${encodeURIComponent(without.id)}`)).body.data.proof).toBeUndefined();
  });
});
