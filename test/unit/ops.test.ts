import { describe, expect, it } from 'vitest';
import { bySeverity, withAgeNow } from '../../src/routes/ops.ts';

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
