/**
 * The pure parts of battles: the derived rows of an engagement (gaps, which killmails
 * can start a battle, who is involved onward), the split of an engagement at a gap, and sides.
 */
import { describe, expect, it } from 'vitest';
import { type BattleKill, canStart, engagementRows } from '../../src/indices/battle-kills.ts';
import { battleKillsOf, battleOf, battleStartOf, sidesOf, startsAt, toBattleStartsQuery } from '../../src/query/battles.ts';

const MIN = 60_000;
const T0 = Date.parse('2026-07-01T00:00:00Z');

function kill(id: string, minute: number, victim?: [string, string?], killers: [string, string?][] = [], npc = false) {
  const actor = ([id, tribe]: [string, string?]) => ({ id, ...(tribe && { tribe }) });
  return {
    kill: { id, environment: 'stillness', systemId: 'system:s:1', cycle: 1, occurredAt: new Date(T0 + minute * MIN).toISOString(), ...(victim && { victim: actor(victim) }), killers: killers.map(actor), npc },
    ms: T0 + minute * MIN,
  };
}

function engagement(kills: ReturnType<typeof kill>[]): (BattleKill & { involved?: string[] })[] {
  return engagementRows(
    kills.map((k) => k.kill),
    kills.map((k) => k.ms),
  );
}

describe('engagementRows', () => {
  const rows = engagement([kill('k1', 0, ['c:1'], [['c:2', 't:2']]), kill('k2', 10, ['c:3']), kill('k3', 40, ['c:4', 't:4']), kill('k4', 42)]);

  it('keeps the gap before and after each killmail, none at the ends', () => {
    expect(rows.map((r) => [r.before, r.after])).toEqual([
      [null, 10 * MIN],
      [10 * MIN, 30 * MIN],
      [30 * MIN, 2 * MIN],
      [2 * MIN, null],
    ]);
    expect(rows.every((r) => r.engagement === 'k1')).toBe(true);
  });

  it('marks the killmails that can start a battle at a gap of 5 to 60 minutes, with who is involved from them on and from which gap', () => {
    expect(rows.map((r) => canStart(r))).toEqual([true, false, true, false]);
    // Each entity with the gap (whole minutes, at least 5) at which the battle from there reaches it.
    expect(rows[0]!.involved).toEqual(['c:1@5', 'c:2@5', 'c:3@10', 'c:4@30', 't:2@5', 't:4@30']);
    expect(rows[2]!.involved).toEqual(['c:4@5', 't:4@5']);
    expect(rows[1]!.involved).toBeUndefined();
  });

  it('splits at a gap: starts, battles and the battle a killmail is in', () => {
    expect(rows.filter((r) => startsAt(r, 15 * MIN)).map((r) => r.id)).toEqual(['k1', 'k3']);
    expect(battleKillsOf('k1', rows, 15 * MIN).map((r) => r.id)).toEqual(['k1', 'k2']);
    expect(battleKillsOf('k1', rows, 30 * MIN).map((r) => r.id)).toEqual(['k1', 'k2', 'k3', 'k4']);
    expect(battleStartOf('k4', rows, 15 * MIN)).toBe('k3');
    expect(battleStartOf('k2', rows, 5 * MIN)).toBeUndefined();
  });
});

describe('sidesOf', () => {
  it('puts the groups that fought each other most on opposite sides, NPCs apart', () => {
    const kills = engagement([
      kill('k1', 0, ['c:b1', 't:b'], [['c:a1', 't:a']]),
      kill('k2', 1, ['c:b2', 't:b'], [['c:a1', 't:a']]),
      kill('k3', 2, ['c:a1', 't:a'], [['c:b1', 't:b']]),
      kill('k4', 3, ['c:b1', 't:b'], [['c:x']]),
      kill('k5', 4, ['c:x'], [], true),
    ]);
    const sides = sidesOf(kills);
    expect(sides.map((s) => [s.side, s.tribes.map((t) => t.id), s.characters.map((c) => c.id), s.kills, s.losses])).toEqual([
      // t:b took part in most killmails (4): side a; t:a fought it; the loner c:x fought t:b.
      ['a', ['t:b'], ['c:b1', 'c:b2'], 1, 3],
      ['b', ['t:a'], ['c:a1', 'c:x'], 3, 2],
      ['npc', [], [], 1, 0],
    ]);
  });

  it('has no side b when one group fought alone (a kill inside a tribe)', () => {
    const sides = sidesOf(engagement([kill('k1', 0, ['c:1', 't:a'], [['c:2', 't:a']]), kill('k2', 1, ['c:2', 't:a'], [['c:1', 't:a']])]));
    expect(sides.map((s) => s.side)).toEqual(['a']);
    expect(sides[0]).toMatchObject({ kills: 2, losses: 2 });
  });

  it('gives a battle the id and instants of its first and last killmail', () => {
    const kills = engagement([kill('k1', 0, ['c:1']), kill('k2', 3, ['c:2'])]);
    expect(battleOf(kills, 15)).toMatchObject({ id: 'k1', killCount: 2, startedAt: kills[0]!.occurredAt, endedAt: kills[1]!.occurredAt, href: '/v1/battles/k1' });
    expect(battleOf(kills, 20).href).toBe('/v1/battles/k1?gap=20');
  });
});

describe('toBattleStartsQuery', () => {
  it('asks for the killmails with after ≤ gap < before, scoped and filtered', () => {
    const query = toBattleStartsQuery({ environment: 'stillness', scope: { kind: 'all' }, gap: 15, involved: ['t:a'] }, 3);
    expect(query.filter).toEqual([
      { term: { environment: 'stillness' } },
      { terms: { involved: ['t:a@5', 't:a@6', 't:a@7', 't:a@8', 't:a@9', 't:a@10', 't:a@11', 't:a@12', 't:a@13', 't:a@14', 't:a@15'] } },
      { range: { after: { lte: 15 * MIN } } },
      { range: { before: { gt: 15 * MIN } } },
    ]);
    expect(query.sort).toEqual([{ occurredAt: { order: 'desc', format: 'strict_date_optional_time_nanos' } }, { id: { order: 'desc' } }]);
  });
});
