/**
 * Events and killmails as request bodies: newest first by `occurredAt` (a `date_nanos`
 * instant, so `…:05.1Z` and `…:05.10000Z` compare as the same time, unlike the reference's
 * text comparison), ties by id descending — or oldest first with `sort=occurredAt:asc`;
 * cycle-scoped; `since`/`until` as an instant range; exact filters on indexed ids, each one
 * value or any of several.
 *
 * `sort=indexedAt:asc` lists rows in the order they became visible (the first-seen instant of
 * the load that first held them, then `occurredAt`, then id), and `since_indexed` keeps those
 * first held after an instant: what a follower (a killfeed, a mirror) has not seen yet, even a
 * row that arrived late with an old `occurredAt`.
 */
import type { estypes } from '@elastic/elasticsearch';
import { FIRST_SEEN } from '../indices/description.ts';
import { events, killmails } from '../indices/timeline.ts';
import { type ListQuery, NANOS_FORMAT, type PagePosition, type Query, type SearchBody, environmentScope, oneOf, reversed, term, toListBody, toSort } from './list.ts';
import type { AnyOf } from './route-parameters.ts';
import type { CycleScope } from './scope.ts';
import { toTokensFilter } from './search.ts';
import { type TimeBound, toAfter, toTimeRange } from './time-range.ts';

/**
 * Events and killmails are counted exactly up to this many rows per list; past it `meta.count` is
 * a lower bound. An exact count walks every row of the default scope on each first page, and
 * grows with the list; a count up to a bound stays flat.
 */
export const TIMELINE_COUNT_UP_TO = 100_000;

/** The orders a timeline can be read in; the first is the default. */
export const TIMELINE_SORTS = ['occurredAt:desc', 'occurredAt:asc', 'indexedAt:asc', 'indexedAt:desc'] as const;
export type TimelineSort = (typeof TIMELINE_SORTS)[number];

interface TimelineParams {
  /** Only these ids (`id=a|b`). */
  ids?: AnyOf;
  environment: string;
  scope: CycleScope;
  limit: number;
  q?: string;
  since?: TimeBound;
  until?: TimeBound;
  /** Only rows first held by a load after this instant. */
  sinceIndexed?: TimeBound;
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
  /** Killmails these entities took part in (victim, killer or reporter), narrowed by `side`. */
  involved?: AnyOf;
  side?: 'kills' | 'losses';
  system?: AnyOf;
  victim?: AnyOf;
  /** Killer character ids, NPC killer type ids or the killers' entity ids. */
  killer?: AnyOf;
  reporter?: AnyOf;
  npc?: boolean;
  /** Killmails with any of these labels (src/indices/killmail-labels.ts). */
  label?: AnyOf;
}

const EVENT_SORT = toSort(events, events.sort);
const KILLMAIL_SORT = toSort(killmails, killmails.sort);
/** In the order rows became visible: by load, then as they happened, ties by id. */
const BY_FIRST_SEEN: estypes.SortCombinations[] = [
  { [FIRST_SEEN]: { order: 'asc', format: NANOS_FORMAT } },
  { occurredAt: { order: 'asc', format: NANOS_FORMAT } },
  { id: { order: 'asc' } },
];

function scoped(params: Omit<TimelineParams, 'limit'>, currentCycle: number): Query[] {
  const filter = [
    ...environmentScope(params.environment, params.scope, currentCycle),
    ...toTimeRange('occurredAt', params.since, params.until),
    ...toAfter(FIRST_SEEN, params.sinceIndexed),
    ...(params.ids === undefined ? [] : [oneOf('id', params.ids)]),
  ];
  if (params.q !== undefined) filter.push(toTokensFilter(params.q));
  return filter;
}

/** Exact-match filters for the parameters that are set, as `field → values`. */
function exact(pairs: Record<string, AnyOf | undefined>): Query[] {
  return Object.entries(pairs).flatMap(([field, values]) => (values === undefined ? [] : [oneOf(field, values)]));
}

const ORDERS: Record<TimelineSort, (newestFirst: estypes.SortCombinations[]) => estypes.SortCombinations[]> = {
  'occurredAt:desc': (newestFirst) => newestFirst,
  'occurredAt:asc': reversed,
  'indexedAt:asc': () => BY_FIRST_SEEN,
  'indexedAt:desc': () => reversed(BY_FIRST_SEEN),
};

function timelineQuery(filter: Query[], newestFirst: estypes.SortCombinations[], params: Omit<TimelineParams, 'limit'>): ListQuery {
  return { filter, sort: ORDERS[params.sort ?? 'occurredAt:desc'](newestFirst), indexSorted: true };
}

/**
 * A list read with its changes (`include=removed`, src/indices/changes.ts): only the changes of
 * loads up to the generation read — a load writes its changes before it goes live. Its rows are
 * all first seen up to that instant already.
 */
export function throughGeneration(list: ListQuery, indexedAt: string | undefined): ListQuery {
  return indexedAt === undefined ? list : { ...list, filter: [...list.filter, { range: { [FIRST_SEEN]: { lte: indexedAt, format: NANOS_FORMAT } } }] };
}

export function toEventListQuery(params: Omit<EventListParams, 'limit'>, currentCycle: number): ListQuery {
  const { kind, module, packageId, transactionDigest, sourceId } = params;
  const filter = [...scoped(params, currentCycle), ...exact({ kind, module, packageId, transactionDigest, sourceId })];
  return timelineQuery(filter, EVENT_SORT, params);
}

export function toEventListBody(params: EventListParams, currentCycle: number, page: PagePosition = {}): SearchBody {
  return toListBody({ ...toEventListQuery(params, currentCycle), limit: params.limit, ...page });
}

export function toKillmailListQuery(params: Omit<KillmailListParams, 'limit'>, currentCycle: number): ListQuery {
  const { system, victim, killer, reporter, npc, label } = params;
  const filter = [...scoped(params, currentCycle), ...exact({ systemId: system, victimId: victim, killerIds: killer, reporterId: reporter, labels: label })];
  if (npc !== undefined) filter.push(term('npc', npc));
  if (params.involved !== undefined) filter.push(involvement(params.involved, params.side));
  // The stored row is the list view (the raw chain payload left out: the reference's weak point 12).
  return timelineQuery(filter, KILLMAIL_SORT, params);
}

/** Killmails an entity took part in: as a killer (`kills`), the victim (`losses`), or any of those or the reporter. */
function involvement(ids: AnyOf, side: KillmailListParams['side']): Query {
  if (side === 'kills') return oneOf('killerIds', ids);
  if (side === 'losses') return oneOf('victimId', ids);
  return { bool: { should: [oneOf('victimId', ids), oneOf('killerIds', ids), oneOf('reporterId', ids)], minimum_should_match: 1 } };
}

export function toKillmailListBody(params: KillmailListParams, currentCycle: number, page: PagePosition = {}): SearchBody {
  return toListBody({ ...toKillmailListQuery(params, currentCycle), limit: params.limit, ...page });
}
