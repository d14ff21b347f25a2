/**
 * Battles as a computation over the bundle files gives them (the gateway's rule is
 * README *Battles* and src/query/battles.ts): killmails.jsonl grouped by environment and system,
 * ordered by instant then id, cut where the next one comes more than the gap after, runs of two
 * or more; sides from the `belongs_to` relations and the NPC proofs of expectedLabels.
 */
import type { BundleRow } from '../../generator/read-bundle.ts';
import { actorsOf, expectedLabels, tribesOf } from './killmail-labels.ts';

export interface ExpectedSide {
  side: 'a' | 'b' | 'npc';
  groups: string[];
  characters: string[];
  tribes: string[];
  kills: number;
  losses: number;
}

export interface ExpectedBattle {
  id: string;
  systemId: string;
  startedAt: number;
  endedAt: number;
  killIds: string[];
  /** Sides a and b, and the NPC side where NPCs killed. */
  sides: ExpectedSide[];
}

interface Kill {
  row: BundleRow;
  ms: number;
  victim?: string;
  killers: string[];
  npc: boolean;
}

/** Every battle of the files at `gapMinutes`, newest first (ties: id descending). */
export function expectedBattles(killmails: readonly BundleRow[], relations: readonly BundleRow[], gapMinutes: number, environment = 'stillness'): ExpectedBattle[] {
  const tribes = tribesOf(relations);
  const labels = expectedLabels(killmails, relations);
  const tribeOf = (character: string) => [...(tribes.get(character) ?? [])].sort()[0];
  const bySystem = new Map<string, Kill[]>();
  for (const row of killmails) {
    const actors = actorsOf(row);
    if (row.environment !== environment || !actors.systemId) continue;
    const kill: Kill = {
      row,
      ms: Date.parse(String(row.occurredAt)),
      victim: actors.victimId,
      killers: actors.killerIds.filter((id) => id.startsWith('character:')),
      npc: labels.get(row.id)!.includes('npc'),
    };
    bySystem.set(actors.systemId, [...(bySystem.get(actors.systemId) ?? []), kill]);
  }
  const battles: ExpectedBattle[] = [];
  for (const [systemId, kills] of bySystem) {
    kills.sort((a, b) => a.ms - b.ms || (a.row.id < b.row.id ? -1 : 1));
    let run: Kill[] = [];
    const close = () => {
      if (run.length >= 2) battles.push(battleOf(systemId, run, tribeOf));
      run = [];
    };
    for (const kill of kills) {
      if (run.length && kill.ms - run.at(-1)!.ms > gapMinutes * 60_000) close();
      run.push(kill);
    }
    close();
  }
  return battles.sort((a, b) => b.startedAt - a.startedAt || (a.id < b.id ? 1 : -1));
}

function battleOf(systemId: string, kills: Kill[], tribeOf: (character: string) => string | undefined): ExpectedBattle {
  const group = (character: string) => tribeOf(character) ?? character;
  // Edges between groups, each killmail once per killer group.
  const edges = new Map<string, number>();
  const involvement = new Map<string, number>();
  const killerGroupsOf = (k: Kill) => {
    const groups = new Set(k.killers.map(group));
    if (k.npc && groups.size === 0) groups.add('npc');
    return groups;
  };
  for (const k of kills) {
    const killers = killerGroupsOf(k);
    const victim = k.victim ? group(k.victim) : undefined;
    for (const g of new Set([...killers, ...(victim ? [victim] : [])])) involvement.set(g, (involvement.get(g) ?? 0) + 1);
    for (const g of killers) if (g !== 'npc' && victim && g !== victim) for (const key of [`${g}>${victim}`, `${victim}>${g}`]) edges.set(key, (edges.get(key) ?? 0) + 1);
  }
  const groups = [...involvement.keys()].filter((g) => g !== 'npc').sort((a, b) => involvement.get(b)! - involvement.get(a)! || (a < b ? -1 : 1));
  const sideOf = new Map<string, number>();
  const sums = [0, 0];
  for (const g of groups) {
    const vs = [0, 0];
    for (const [other, side] of sideOf) vs[side]! += edges.get(`${g}>${other}`) ?? 0;
    const side = vs[1]! > vs[0]! ? 0 : vs[0]! > vs[1]! ? 1 : sums[1]! < sums[0]! ? 1 : 0;
    sideOf.set(g, side);
    sums[side]! += involvement.get(g)!;
  }
  const sides: ExpectedSide[] = (['a', 'b', 'npc'] as const).map((side) => ({ side, groups: [], characters: [], tribes: [], kills: 0, losses: 0 }));
  const sideIndex = (g: string) => (g === 'npc' ? 2 : sideOf.get(g)!);
  for (const g of involvement.keys()) sides[sideIndex(g)]!.groups.push(g);
  for (const k of kills) {
    for (const c of [...k.killers, ...(k.victim ? [k.victim] : [])]) {
      const side = sides[sideIndex(group(c))]!;
      if (!side.characters.includes(c)) side.characters.push(c);
      const tribe = tribeOf(c);
      if (tribe && !side.tribes.includes(tribe)) side.tribes.push(tribe);
    }
    for (const s of new Set([...killerGroupsOf(k)].map(sideIndex))) sides[s]!.kills += 1;
    if (k.victim) sides[sideIndex(group(k.victim))]!.losses += 1;
  }
  for (const side of sides) for (const list of [side.groups, side.characters, side.tribes]) list.sort();
  return {
    id: kills[0]!.row.id,
    systemId,
    startedAt: kills[0]!.ms,
    endedAt: kills.at(-1)!.ms,
    killIds: kills.map((k) => k.row.id),
    sides: sides.filter((side, i) => i === 0 || side.kills + side.losses > 0),
  };
}
