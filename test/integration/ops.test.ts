/** The four ops documents, enveloped, from the live generation; expectations from the bundle files. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJson } from '../../generator/read-bundle.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';

let gw: TestGateway;
const file = (name: string) => readJson(gw.bundleDir, name) as Promise<{ data: any }>;

beforeAll(async () => {
  gw = await startTestGateway({ name: 'ops', scale: 1, seed: 5 });
}, 300_000);

afterAll(() => gw?.close());

describe('/v1/ops', () => {
  it('serves freshness rows as exported, with their age recomputed now', async () => {
    const before = Date.now();
    const { status, body, headers } = await gw.get('/v1/ops/freshness');
    expect(status).toBe(200);
    expect(headers.get('cache-control')).toBe('no-store');
    const exported = (await file('ops_freshness.json')).data;
    expect(body.data).toHaveLength(exported.length);
    body.data.forEach((row: any, i: number) => {
      const { ageSeconds, stalenessNow, ...rest } = row;
      expect(rest).toEqual(exported[i]);
      if (exported[i].lastSuccessfulIngest) {
        const age = (before - Date.parse(exported[i].lastSuccessfulIngest)) / 1000;
        expect(Math.abs(ageSeconds - age)).toBeLessThan(60);
        expect(stalenessNow).toBe(age <= 900 ? 'live_indexed' : 'cached_snapshot');
      } else expect(ageSeconds).toBeNull();
    });
  });

  it('serves cursors and chain coverage inside the envelope, also at the reference path', async () => {
    expect((await gw.get('/v1/ops/cursors')).body.data).toEqual((await file('ops_cursors.json')).data ?? []);
    const coverage = (await file('ops_chain_coverage.json')).data;
    const spec = await gw.get('/v1/ops/chain-coverage');
    expect(spec.body).toMatchObject({ data: coverage, meta: { apiVersion: 'v1' } });
    expect((await gw.get('/v1/ops/sui-coverage')).body.data).toEqual(coverage);
  });

  it('orders source gaps most severe first and filters by environment', async () => {
    const gaps: any[] = (await file('ops_source_gaps.json')).data;
    const rank = (s: string) => ({ actionable: 0, info: 1, none: 2 })[s] ?? 3;
    const order = (rows: any[]) => [...rows].sort((a, b) => rank(a.severity) - rank(b.severity) || a.kind.localeCompare(b.kind) || a.id.localeCompare(b.id));
    const all = await gw.get('/v1/ops/source-gaps');
    expect(all.body.data).toEqual(order(gaps));
    expect(new Set(gaps.map((g) => g.severity)).size).toBeGreaterThan(1);
    const env = gaps[0].environment;
    expect((await gw.get(`/v1/ops/source-gaps?environment=${env}`)).body.data).toEqual(order(gaps.filter((g) => g.environment === env)));
    expect((await gw.get('/v1/ops/source-gaps?environment=nowhere')).body.data).toEqual([]);
  });
});
