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
import { ApiError } from '../errors.ts';
import { FIRST_SEEN } from '../indices/description.ts';
import { events, killmails } from '../indices/timeline.ts';
import { type ListQuery, NANOS_FORMAT, type PagePosition, type Query, type SearchBody, environmentScope, oneOf, reversed, term, toListBody, toSort } from './list.ts';
import type { AnyParameter, Parameter } from './parameters.ts';
import {
  type AnyOf,
  EVENT_KIND,
  EXCLUDE,
  IDS,
  INCLUDE,
  INVOLVED,
  KILLER,
  LABEL,
  MODULE,
  NPC,
  PACKAGE_ID,
  Q,
  REPORTER,
  SIDE,
  SINCE,
  SINCE_INDEXED,
  SOURCE_ID,
  SYSTEM,
  TRANSACTION_DIGEST,
  UNTIL,
  VICTIM,
  exactFilter,
  refuseExcludedLabel,
} from './route-parameters.ts';
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

/**
 * One filter of a timeline, declared once: its parameter (name, schema, parsing), the key its
 * value is bound under (the builders' params and a cursor's scope: camelCase, as the indexed
 * fields) and its query. The list route, the stream route, the OpenAPI document, downloads and
 * the body builder all read the declaration; a new filter is one more entry.
 */
export interface TimelineFilter<P extends AnyParameter = AnyParameter, Key extends string = string> {
  readonly parameter: P;
  readonly key: Key;
  /** Its query, given its value and every bound filter; absent for a filter another one reads (`side`). */
  // A method, so a declaration of a narrower value still is a TimelineFilter.
  toQuery?(value: ValueOf<P>, bound: Readonly<Record<string, unknown>>): Query;
  /** The filter it narrows: given without that one, a 400. */
  readonly narrows?: AnyParameter;
  /** Refuses its value with a 400 given the request's other values (by parameter name). */
  check?(value: ValueOf<P>, values: Readonly<Record<string, unknown>>): void;
}

type ValueOf<P> = P extends Parameter<string, infer V> ? V : never;

/** An exact filter on an indexed field: any of the values (`a|b`). */
const exactOn = <const P extends Parameter<string, AnyOf>, const Key extends string>(parameter: P, key: Key, field: string): TimelineFilter<P, Key> => ({
  parameter,
  key,
  toQuery: (values) => oneOf(field, values),
});

/** Killmails an entity took part in: as a killer (`kills`), the victim (`losses`), or any of those or the reporter. */
function involvement(ids: AnyOf, side: unknown): Query {
  if (side === 'kills') return oneOf('killerIds', ids);
  if (side === 'losses') return oneOf('victimId', ids);
  return { bool: { should: [oneOf('victimId', ids), oneOf('killerIds', ids), oneOf('reporterId', ids)], minimum_should_match: 1 } };
}

export const KILLMAIL_FILTERS = [
  { parameter: INVOLVED, key: 'involved', toQuery: (ids: AnyOf, bound) => involvement(ids, bound.side) } satisfies TimelineFilter<typeof INVOLVED, 'involved'>,
  { parameter: SIDE, key: 'side', narrows: INVOLVED } satisfies TimelineFilter<typeof SIDE, 'side'>,
  exactOn(SYSTEM, 'system', 'systemId'),
  exactOn(VICTIM, 'victim', 'victimId'),
  // Killer character ids, NPC killer type ids or the killers' entity ids.
  exactOn(KILLER, 'killer', 'killerIds'),
  exactOn(REPORTER, 'reporter', 'reporterId'),
  { parameter: NPC, key: 'npc', toQuery: (npc: boolean) => term('npc', npc) } satisfies TimelineFilter<typeof NPC, 'npc'>,
  // Labels: src/indices/killmail-labels.ts.
  exactOn(LABEL, 'label', 'labels'),
  {
    parameter: EXCLUDE,
    key: 'exclude',
    toQuery: (labels: AnyOf) => ({ bool: { must_not: [oneOf('labels', labels)] } }),
    check: (labels: AnyOf, values) => refuseExcludedLabel(values.label as AnyOf | undefined, labels),
  } satisfies TimelineFilter<typeof EXCLUDE, 'exclude'>,
  exactOn(exactFilter('loss_type', 'What was lost (exact), e.g. `Ship` or `Structure`.', ['Ship', 'Structure']), 'lossType', 'lossType'),
] as const;

export const EVENT_FILTERS = [
  exactOn(EVENT_KIND, 'kind', 'kind'),
  exactOn(MODULE, 'module', 'module'),
  exactOn(PACKAGE_ID, 'packageId', 'packageId'),
  exactOn(TRANSACTION_DIGEST, 'transactionDigest', 'transactionDigest'),
  exactOn(SOURCE_ID, 'sourceId', 'sourceId'),
] as const;

type Filters = readonly TimelineFilter[];
/** What the builders take of a timeline's filters: each by its key. */
export type FilterValues<Fs extends Filters> = { [F in Fs[number] as F['key']]?: ValueOf<F['parameter']> };
type ParametersOf<Fs extends Filters> = { readonly [K in keyof Fs]: Fs[K]['parameter'] };

/** A timeline's query parameters, in the order the list and the stream route declare them. */
export function timelineParameters<const Fs extends Filters>(filters: Fs) {
  return [Q, IDS, ...(filters.map((filter) => filter.parameter) as unknown as ParametersOf<Fs>), SINCE, UNTIL, SINCE_INDEXED, INCLUDE] as const;
}

/** A request's values of a timeline's filters, by key; a filter given without the one it narrows is a 400 naming it. */
export function boundFilters<const Fs extends Filters>(filters: Fs, values: Readonly<Record<string, unknown>>): FilterValues<Fs> {
  const bound: Record<string, unknown> = {};
  for (const filter of filters) {
    const { parameter, key, narrows } = filter;
    const value = values[parameter.name];
    if (value === undefined) continue;
    if (narrows && values[narrows.name] === undefined) throw ApiError.badParameter(parameter.name, `${parameter.name} narrows ${narrows.name}: give ${narrows.name} with it.`);
    filter.check?.(value as never, values);
    bound[key] = value;
  }
  return bound as FilterValues<Fs>;
}

/** The rows a timeline request asks for, by the builders' names: ids, text, time ranges and every filter. */
export function boundTimeline<const Fs extends Filters>(filters: Fs, values: Readonly<Record<string, unknown>>): Pick<TimelineParams, 'ids' | 'q' | 'since' | 'until' | 'sinceIndexed'> & FilterValues<Fs> {
  const { id: ids, q, since, until, since_indexed: sinceIndexed } = values as { id?: AnyOf; q?: string; since?: TimeBound; until?: TimeBound; since_indexed?: TimeBound };
  return { ids, q, since, until, sinceIndexed, ...boundFilters(filters, values) };
}

/** The queries of the bound filters, in declaration order. */
function filterQueries(filters: Filters, bound: Readonly<Record<string, unknown>>): Query[] {
  return filters.flatMap((filter) => {
    const value = bound[filter.key];
    return value === undefined || !filter.toQuery ? [] : [filter.toQuery(value as never, bound)];
  });
}

export type EventListParams = TimelineParams & FilterValues<typeof EVENT_FILTERS>;
export type KillmailListParams = TimelineParams & FilterValues<typeof KILLMAIL_FILTERS>;

/** What a timeline is: its index (newest first as it sorts) and its filters. */
export interface Timeline<Fs extends Filters = Filters> {
  readonly index: typeof events | typeof killmails;
  readonly filters: Fs;
}

/** The index a timeline reads, by name (the descriptions type their names as any string). */
export const timelineIndex = (timeline: Timeline) => timeline.index.name as 'events' | 'killmails';

export const EVENT_TIMELINE = { index: events, filters: EVENT_FILTERS } as const satisfies Timeline;
export const KILLMAIL_TIMELINE = { index: killmails, filters: KILLMAIL_FILTERS } as const satisfies Timeline;

/** Each timeline's index sort, newest first. */
const NEWEST_FIRST = new Map([events, killmails].map((index) => [index, toSort(index, index.sort)]));
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

/** A timeline's rows under the request's scope and filters, in the order asked. */
export function toTimelineQuery<Fs extends Filters>(timeline: Timeline<Fs>, params: Omit<TimelineParams, 'limit'> & FilterValues<Fs>, currentCycle: number): ListQuery {
  const filter = [...scoped(params, currentCycle), ...filterQueries(timeline.filters, params)];
  return timelineQuery(filter, NEWEST_FIRST.get(timeline.index)!, params);
}

export const toEventListQuery = (params: Omit<EventListParams, 'limit'>, currentCycle: number): ListQuery => toTimelineQuery(EVENT_TIMELINE, params, currentCycle);

export function toEventListBody(params: EventListParams, currentCycle: number, page: PagePosition = {}): SearchBody {
  return toListBody({ ...toEventListQuery(params, currentCycle), limit: params.limit, ...page });
}

// The stored killmail is the list view (the raw chain payload left out: the reference's weak point 12).
export const toKillmailListQuery = (params: Omit<KillmailListParams, 'limit'>, currentCycle: number): ListQuery => toTimelineQuery(KILLMAIL_TIMELINE, params, currentCycle);

export function toKillmailListBody(params: KillmailListParams, currentCycle: number, page: PagePosition = {}): SearchBody {
  return toListBody({ ...toKillmailListQuery(params, currentCycle), limit: params.limit, ...page });
}
