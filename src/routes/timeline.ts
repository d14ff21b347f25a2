/**
 * A timeline's list route (`/v1/events`, `/v1/killmails`): its parameters and query are its
 * timeline's declaration (src/query/timeline.ts) with what pages a list — scope, limit, cursor,
 * sort, select, group_by, format; the stream routes (./stream.ts) read the same declaration.
 */
import type { GroupField } from '../query/groups.ts';
import { groupByParameter } from '../query/groups.ts';
import { FORMAT, INCLUDE_UNKNOWN, LIST, boundSort, listParams, sortParameter } from '../query/route-parameters.ts';
import { selectParameter } from '../query/select.ts';
import { TIMELINE_COUNT_UP_TO, TIMELINE_SORTS, type Timeline, boundTimeline, throughGeneration, timelineIndex, timelineParameters, toTimelineQuery } from '../query/timeline.ts';
import type { GenerationDoc } from '../indices/generation.ts';
import { type TimeBound, laterBound, toTimeBound } from '../query/time-range.ts';
import type { AppRouter, RouteDeps } from './context.ts';
import { list, route } from './operation.ts';
import { groupRequest } from './list-request.ts';
import { sendList } from './list.ts';
import { fieldsOf, ref } from './records.ts';

/**
 * `meta.indexedThrough` of a timeline page: the first-seen instant of the generation it was read
 * from, so every row first held up to that instant is in it — and never earlier than the
 * `since_indexed` it was asked with. The next poll's `since_indexed`: behind one address,
 * gateways take a new generation up each on its own second or two, and a poll answered by one
 * still on the generation before must not move its client back (it would be given the rows
 * between the two instants again by the next).
 */
export function indexedThrough(generation: GenerationDoc, asked?: TimeBound): { indexedThrough?: string } {
  const through = generation.indexedAt ? toTimeBound('indexedAt', generation.indexedAt) : undefined;
  const later = laterBound(through, asked);
  return later ? { indexedThrough: later === through ? generation.indexedAt! : later.at } : {};
}

export interface TimelineRoute<T extends Timeline> {
  path: '/v1/events' | '/v1/killmails';
  summary: string;
  timeline: T;
  /** The OpenAPI record of a row. */
  record: 'Event' | 'Killmail';
  groups: readonly GroupField[];
}

export function timelineListRoute<T extends Timeline>(router: AppRouter, deps: RouteDeps, { path, summary, timeline, record, groups }: TimelineRoute<T>): void {
  /** What `select` can keep, and a CSV's columns without it. */
  const fields = fieldsOf(record);
  const query = [
    ...LIST,
    ...timelineParameters(timeline.filters),
    sortParameter(TIMELINE_SORTS, '`occurredAt:desc` (newest first); `indexedAt:asc` in the order rows became visible'),
    selectParameter(fields),
    groupByParameter(groups, 'occurredAt'),
    INCLUDE_UNKNOWN,
    FORMAT,
  ] as const;
  route(router, path, { summary, query, answer: list(ref(record)) }, async (ctx, params) => {
    const { cursor, limit, ...scope } = listParams(params, deps.config.defaultEnvironment);
    const bound = boundTimeline(timeline.filters, params);
    const bind = { ...scope, ...bound, sort: boundSort(params.sort, TIMELINE_SORTS[0]) };
    const withChanges = params.include === 'removed';
    await sendList(ctx, deps, {
      route: path,
      bind: { ...bind, include: params.include },
      cursor,
      limit,
      index: timelineIndex(timeline),
      query: (generation) => {
        const rows = toTimelineQuery(timeline, bind, generation.currentCycle);
        return withChanges ? throughGeneration(rows, generation.indexedAt) : rows;
      },
      withChanges,
      countUpTo: TIMELINE_COUNT_UP_TO,
      meta: (generation) => indexedThrough(generation, bound.sinceIndexed),
      ids: bound.ids && { asked: bound.ids, fields: ['id'] },
      select: params.select,
      groups: groupRequest(params),
      format: params.format,
      columns: fields,
    });
  });
}
