/**
 * Cycles: which one is current, and when each started. The loader derives the cycle of rows
 * from them and the gateway answers with them, so both read this section.
 */
import { parseIsoInstant } from '../time/instant.ts';
import { ConfigError, int } from './parse.ts';
import { section } from './setting.ts';
import type { CycleStart } from './types.ts';

const DEFAULT_CYCLE_STARTS = '5=2026-03-11T09:00:00Z,6=2026-06-25T09:00:00Z';

/** Parses `5=2026-03-11T09:00:00Z,6=...` into boundaries sorted by start. */
export function parseCycleStarts(raw: string): CycleStart[] {
  const starts = raw.split(',').map((part) => {
    const match = /^\s*(\d+)\s*=\s*(\S+)\s*$/.exec(part);
    // The one strict instant parser: a 30th of February is refused, never moved to March.
    const parsed = match ? parseIsoInstant(match[2]!) : undefined;
    const startsAtMs = parsed ? parsed.ms + Number(parsed.fraction.slice(0, 3).padEnd(3, '0')) : NaN;
    if (!match || Number(match[1]) < 1 || Number.isNaN(startsAtMs)) {
      throw new ConfigError(`CYCLE_STARTS must look like "5=2026-03-11T09:00:00Z,6=...", got "${raw}"`);
    }
    return { cycle: Number(match[1]), startsAt: match[2]!, startsAtMs };
  });
  return starts.sort((a, b) => a.startsAtMs - b.startsAtMs);
}

export const cycles = section({
  currentCycle: {
    env: 'CURRENT_CYCLE',
    parse: int(1, 1_000_000),
    meaning: "overrides the current cycle (else the manifest's highest `cycles`, else the data's highest cycle)",
    readBy: ['gateway', 'loader', 'start'],
  },
  cycleStarts: {
    env: 'CYCLE_STARTS',
    default: DEFAULT_CYCLE_STARTS,
    parse: (raw) => Object.freeze(parseCycleStarts(raw)),
    meaning: 'cycle boundaries used to derive the cycle of killmails, events without `cycle` and chain objects; earlier = uncycled',
    readBy: ['gateway', 'loader', 'start'],
  },
});
