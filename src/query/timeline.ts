/**
 * Events and killmails as request bodies: newest first by `occurredAt` (a `date_nanos`
 * instant, so `…:05.1Z` and `…:05.10000Z` compare as the same time, unlike the reference's
 * text comparison), ties by id descending — or oldest first with `sort=occurredAt:asc`;
 * cycle-scoped; `since`/`until` as an instant range; exact filters on indexed ids, each one
 * value or any of several.
 */
import type { estypes } from '@elastic/elasticsearch';
import { events, killmails } from '../indices/timeline.ts';
import { type PagePosition, type Query, type SearchBody, environmentScope, oneOf, reversed, term, toListBody, toSort } from './list.ts';
import type { AnyOf } from './params.ts';
import type { CycleScope } from './scope.ts';
import { toTokensFilter } from './search.ts';
import { type TimeBound, toTimeRange } from './time-range.ts';

/** The orders a timeline can be read in; the first is the default. */
export const TIMELINE_SORTS = ['occurredAt:desc', 'occurredAt:asc'] as const;
export type TimelineSort = (typeof TIMELINE_SORTS)[number];

interface TimelineParams {
  environment: string;
  scope: CycleScope;
  limit: number;
  q?: string;
  since?: TimeBound;
  until?: TimeBound;
  sort?: TimelineSort;
}

export interface EventListParams extends TimelineParams {
  kind?: AnyOf;
  module?: AnyOf;
  packageId?: AnyOf;
  transactionDigest?: AnyOf;
  sourceId?: AnyOf;
}

export interface KillmailListParams extends TimelineParams {
  system?: AnyOf;
  victim?: AnyOf;
  /** Killer character ids, NPC killer type ids or the killers' entity ids. */
  killer?: AnyOf;
  reporter?: AnyOf;
  npc?: boolean;
}

const EVENT_SORT = toSort(events, events.sort);
const KILLMAIL_SORT = toSort(killmails, killmails.sort);

function scoped(params: TimelineParams, currentCycle: number): Query[] {
  const filter = [...environmentScope(params.environment, params.scope, currentCycle), ...toTimeRange('occurredAt', params.since, params.until)];
  if (params.q !== undefined) filter.push(toTokensFilter(params.q));
  return filter;
}

/** Exact-match filters for the parameters that are set, as `field → values`. */
function exact(pairs: Record<string, AnyOf | undefined>): Query[] {
  return Object.entries(pairs).flatMap(([field, values]) => (values === undefined ? [] : [oneOf(field, values)]));
}

function timelineBody(filter: Query[], newestFirst: estypes.SortCombinations[], params: TimelineParams, page: PagePosition): SearchBody {
  const sort = params.sort === 'occurredAt:asc' ? reversed(newestFirst) : newestFirst;
  return toListBody({ filter, sort, limit: params.limit, indexSorted: true, ...page });
}

export function toEventListBody(params: EventListParams, currentCycle: number, page: PagePosition = {}): SearchBody {
  const { kind, module, packageId, transactionDigest, sourceId } = params;
  const filter = [...scoped(params, currentCycle), ...exact({ kind, module, packageId, transactionDigest, sourceId })];
  return timelineBody(filter, EVENT_SORT, params, page);
}

export function toKillmailListBody(params: KillmailListParams, currentCycle: number, page: PagePosition = {}): SearchBody {
  const { system, victim, killer, reporter, npc } = params;
  const filter = [...scoped(params, currentCycle), ...exact({ systemId: system, victimId: victim, killerIds: killer, reporterId: reporter })];
  if (npc !== undefined) filter.push(term('npc', npc));
  // The stored row is the list view (the raw chain payload left out: the reference's weak point 12).
  return timelineBody(filter, KILLMAIL_SORT, params, page);
}
