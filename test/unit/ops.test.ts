import { describe, expect, it } from 'vitest';
import { bySeverity, withAgeNow } from '../../src/routes/ops.ts';
import { createFreshnessSource } from '../../src/routes/freshness.ts';
import type { SearchService } from '../../src/search/search-service.ts';

/** Texts Date.parse reads as some instant and the export's grammar (src/time/instant.ts) refuses. */
const LOOSE = ['2026-02-30T00:00:00Z', 'March 3 2026', '2026-06-30T23:50:00', 'Tue, 30 Jun 2026 23:50:00 GMT'];

describe('ops documents', () => {
  const now = Date.parse('2026-07-01T00:00:00Z');

  it('recomputes the age of a freshness row at read time', () => {
    const fresh = withAgeNow({ stalenessStatus: 'cached_snapshot', lastSuccessfulIngest: '2026-06-30T23:50:00Z' }, now);
    expect(fresh).toMatchObject({ ageSeconds: 600, stalenessNow: 'live_indexed', stalenessStatus: 'cached_snapshot' });
    const stale = withAgeNow({ stalenessStatus: 'live_indexed', lastSuccessfulIngest: '2026-06-30T23:44:59Z' }, now);
    expect(stale).toMatchObject({ ageSeconds: 901, stalenessNow: 'cached_snapshot' });
    expect(withAgeNow({ stalenessStatus: 'live_indexed' }, now)).toMatchObject({ ageSeconds: null, stalenessNow: 'unknown' });
    expect(withAgeNow({ stalenessStatus: 'static_cycle_data' }, now).stalenessNow).toBe('static_cycle_data');
  });

  it('gives a freshness row whose ingest instant is no real RFC 3339 time no age, as one without', () => {
    for (const loose of LOOSE) {
      expect(Number.isNaN(Date.parse(loose))).toBe(false);
      expect(withAgeNow({ stalenessStatus: 'live_indexed', lastSuccessfulIngest: loose }, now)).toMatchObject({ ageSeconds: null, stalenessNow: 'unknown' });
    }
    expect(withAgeNow({ stalenessStatus: 'live_indexed', lastSuccessfulIngest: '2026-07-01T01:50:00+02:00' }, now)).toMatchObject({ ageSeconds: 600 });
  });

  it('reads the freshness gauges\' instants strictly: a loose one is no gauge', async () => {
    const search = (at: string) =>
      ({
        live: async () => ({ generation: 'g1', generatedAt: at, publishedAt: at, loadedAt: at }),
        state: async () => ({ source: '/bundles', checkedAt: at, loadedAt: at, outcome: 'loaded' }),
      }) as unknown as SearchService;
    const strict = await createFreshnessSource(search('2026-06-30T23:50:00.5Z'))();
    expect(strict).toMatchObject({ generated: 1782863400.5, published: 1782863400.5, live: 1782863400.5, lastCheck: 1782863400.5, lastLoad: 1782863400.5, lag: 0 });
    for (const loose of LOOSE) {
      const gauges = await createFreshnessSource(search(loose))();
      expect(gauges).toMatchObject({ generation: 'g1', generated: undefined, published: undefined, live: undefined, lastCheck: undefined, lastLoad: undefined, lag: undefined });
    }
  });

  it('orders source gaps most severe first, then by kind', () => {
    const gaps = [
      { id: '1', severity: 'none', kind: 'a' },
      { id: '2', severity: 'info', kind: 'b' },
      { id: '3', severity: 'actionable', kind: 'z' },
      { id: '4', severity: 'actionable', kind: 'c' },
      { id: '5', severity: 'odd', kind: 'a' },
    ];
    expect([...gaps].sort(bySeverity).map((g) => g.id)).toEqual(['4', '3', '2', '1', '5']);
  });
});
