/**
 * `/v1/entities/{idOrSlug}/activity`: what a character, tribe or system did in one aggregation
 * over the killmails (one request to Elasticsearch). A character's or tribe's killmails split
 * into the kills it took part in as a killer and the losses it suffered as the victim (a tribe
 * through its members' `belongs_to`, kept on each killmail at load time); a system's are all the
 * killmails in it. Each side answers its count, how many an NPC killed, its loss types, its top
 * systems and opponents (a system: its top killers, victims and their tribes), and a 7 × 24 UTC
 * grid of hour of day by weekday (Monday first), from the `weekHour` each killmail keeps.
 *
 * On several shards a top list is proven exact as groups are (src/query/groups.ts `topIsExact`);
 * one that is not is read again with every shard sending all its terms, and the answer says
 * whether it is exact (`exact`).
 */
import type { estypes } from '@elastic/elasticsearch';
import { MAX_SHARD_SIZE, type TermBucket, candidatesFor, topIsExact } from './groups.ts';
import { type Query, type SearchBody, environmentScope, oneOf, term } from './list.ts';
import type { CycleScope } from './scope.ts';
import { type TimeBound, toTimeRange } from './time-range.ts';

export type ActivityKind = 'character' | 'tribe' | 'system';
export const ACTIVITY_KINDS: readonly ActivityKind[] = ['character', 'tribe', 'system'];

/** How many systems, opponents, characters or tribes a side lists. */
export const TOP = 10;
/** Loss types a side lists at most, and the hours of a week. */
const LOSS_TYPES = 20;
const HOURS = 7 * 24;
/** Terms read for a top list: one more than shown where the entity itself may be among them (it is never its own opponent). */
const topSize = (kind: ActivityKind) => (kind === 'system' ? TOP : TOP + 1);

export interface ActivityParams {
  id: string;
  kind: ActivityKind;
  environment: string;
  scope: CycleScope;
  since?: TimeBound;
  until?: TimeBound;
  /** Killmails with any of these labels are left out (`exclude`). */
  exclude?: readonly string[];
}

/** Which killmails make each side, and what each side lists at its top. */
function sidesOf(id: string, kind: ActivityKind): Record<string, { filter: Query; top: Record<string, string> }> {
  if (kind === 'system') return { killmails: { filter: term('systemId', id), top: { killers: 'killerId', victims: 'victimId', killerTribes: 'killerTribeIds', victimTribes: 'victimTribeIds' } } };
  const [killer, victim] = kind === 'tribe' ? ['killerTribeIds', 'victimTribeIds'] : ['killerIds', 'victimId'];
  return {
    kills: { filter: term(killer, id), top: { systems: 'systemId', opponents: kind === 'tribe' ? 'victimTribeIds' : 'victimId' } },
    losses: { filter: term(victim, id), top: { systems: 'systemId', opponents: kind === 'tribe' ? 'killerTribeIds' : 'killerId' } },
  };
}

/** The shard size of a second read, when the first could not prove every list exact: each shard sends all its terms. */
export const COVERING_SHARD_SIZE = MAX_SHARD_SIZE;

/** The request; `shardSize`: terms each shard sends for a list (a covering read's), else Elasticsearch's heuristic. */
export function toActivityBody(params: ActivityParams, currentCycle: number, shardSize?: number): SearchBody {
  const sides = sidesOf(params.id, params.kind);
  // `map`: one entity's killmails are few beside the index, and counting them in a map of the
  // values met costs a third of walking global ordinals sized for every value of the field
  // (bench es-cost, scale 70: 0.56-0.67 against 1.44-1.77 ms of Elasticsearch CPU a request).
  const terms = (field: string, size: number): estypes.AggregationsAggregationContainer => ({
    // More merged than shown, so that what ranks just below the top is bounded too.
    terms: { field, size: candidatesFor(size), shard_size: Math.max(candidatesFor(size), shardSize ?? 0), show_term_doc_count_error: true, execution_hint: 'map' },
  });
  const side = ({ filter, top }: { filter: Query; top: Record<string, string> }): estypes.AggregationsAggregationContainer => ({
    filter,
    aggs: {
      npc: { filter: term('npc', true) },
      lossTypes: terms('lossType', LOSS_TYPES),
      hours: terms('weekHour', HOURS),
      ...Object.fromEntries(Object.entries(top).map(([name, field]) => [name, terms(field, topSize(params.kind))])),
    },
  });
  return {
    size: 0,
    track_total_hits: false,
    query: {
      bool: {
        filter: [
          ...environmentScope(params.environment, params.scope, currentCycle),
          ...toTimeRange('occurredAt', params.since, params.until),
          { bool: { should: Object.values(sides).map((s) => s.filter), minimum_should_match: 1 } },
        ],
        ...(params.exclude && { must_not: [oneOf('labels', params.exclude)] }),
      },
    },
    aggs: {
      ...Object.fromEntries(Object.entries(sides).map(([name, s]) => [name, side(s)])),
      first: { min: { field: 'occurredAt' } },
      last: { max: { field: 'occurredAt' } },
    },
  };
}

type Buckets = { buckets: TermBucket[]; doc_count_error_upper_bound?: number };
type SideAnswer = { doc_count: number; npc: { doc_count: number }; lossTypes: Buckets; hours: Buckets } & Record<string, Buckets>;

export interface ActivitySide {
  count: number;
  npc: number;
  lossTypes: { lossType: string; count: number }[];
  /** `[weekday][hour]`, UTC, Monday first. */
  grid: number[][];
  [top: string]: unknown;
}

export interface Activity {
  entity: { id: string; entityType: ActivityKind };
  /** Every count and list exact (on any number of shards). */
  exact: boolean;
  first: string | null;
  last: string | null;
  kills?: ActivitySide;
  losses?: ActivitySide;
  killmails?: ActivitySide;
}

/** The aggregation's answer as the activity record; an entity is never its own opponent. */
export function activityOf(params: ActivityParams, aggregations: Record<string, unknown>): Activity {
  const sides = sidesOf(params.id, params.kind);
  const answer: Activity = { entity: { id: params.id, entityType: params.kind }, exact: activityIsExact(params, aggregations), first: null, last: null };
  for (const [name, { top }] of Object.entries(sides)) {
    const found = aggregations[name] as SideAnswer;
    const grid = Array.from({ length: 7 }, () => new Array<number>(24).fill(0));
    for (const b of found.hours.buckets) grid[Math.floor(Number(b.key) / 24)]![Number(b.key) % 24] = b.doc_count;
    const side: ActivitySide = {
      count: found.doc_count,
      npc: found.npc.doc_count,
      lossTypes: found.lossTypes.buckets.slice(0, LOSS_TYPES).map((b) => ({ lossType: String(b.key), count: b.doc_count })),
      grid,
    };
    for (const list of Object.keys(top)) {
      side[list] = found[list]!.buckets.filter((b) => b.key !== params.id).slice(0, TOP).map((b) => ({ id: String(b.key), count: b.doc_count }));
    }
    answer[name as 'kills' | 'losses' | 'killmails'] = side;
  }
  const instant = (name: string) => (aggregations[name] as { value_as_string?: string } | undefined)?.value_as_string ?? null;
  answer.first = instant('first');
  answer.last = instant('last');
  return answer;
}

/** Whether every list of an answer holds its true top (each list asked for its whole size). */
function activityIsExact(params: ActivityParams, aggregations: Record<string, unknown>): boolean {
  return Object.entries(sidesOf(params.id, params.kind)).every(([name, { top }]) => {
    const found = aggregations[name] as SideAnswer;
    const sized: [Buckets, number][] = [[found.lossTypes, LOSS_TYPES], [found.hours, HOURS], ...Object.keys(top).map((list): [Buckets, number] => [found[list]!, topSize(params.kind)])];
    return sized.every(([list, size]) => topIsExact(list.buckets, list.doc_count_error_upper_bound ?? 0, size, candidatesFor(size)));
  });
}
