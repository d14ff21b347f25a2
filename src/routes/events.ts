/** `/v1/events` (newest first, cycle-scoped, exact filters, ranges, groups) and `/v1/events/{id}`. */
import { cycleGroup, groupByParameter, keyword } from '../query/groups.ts';
import {
  EVENT_KIND,
  IDS,
  INCLUDE,
  FORMAT,
  INCLUDE_UNKNOWN,
  LIST,
  MODULE,
  PACKAGE_ID,
  Q,
  SINCE,
  SINCE_INDEXED,
  SOURCE_ID,
  TRANSACTION_DIGEST,
  UNTIL,
  boundSort,
  listParams,
  sortParameter,
} from '../query/route-parameters.ts';
import { selectParameter } from '../query/select.ts';
import { TIMELINE_COUNT_UP_TO, TIMELINE_SORTS, throughGeneration, toEventListQuery } from '../query/timeline.ts';
import type { GenerationDoc } from '../indices/generation.ts';
import type { AppRouter, RouteDeps } from './context.ts';
import { detailRoute } from './detail.ts';
import { list, one, route } from './operation.ts';
import { groupRequest } from './list-request.ts';
import { sendList } from './list.ts';
import { fieldsOf, ref } from './records.ts';

/**
 * `meta.indexedThrough` of a timeline page: the first-seen instant of the generation it was read
 * from, so every row first held up to that instant is in it. The next poll's `since_indexed`.
 */
export const indexedThrough = (generation: GenerationDoc) => (generation.indexedAt ? { indexedThrough: generation.indexedAt } : {});

/** What `select` can keep, and a CSV's columns without it. */
const FIELDS = fieldsOf('Event');

const GROUPS = [keyword('kind'), keyword('module'), keyword('package_id', 'packageId'), keyword('source_id', 'sourceId', 'sources'), cycleGroup];

export function eventRoutes(router: AppRouter, deps: RouteDeps): void {
  const query = [
    ...LIST,
    Q,
    IDS,
    EVENT_KIND,
    MODULE,
    PACKAGE_ID,
    TRANSACTION_DIGEST,
    SOURCE_ID,
    SINCE,
    UNTIL,
    SINCE_INDEXED,
    INCLUDE,
    sortParameter(TIMELINE_SORTS, '`occurredAt:desc` (newest first); `indexedAt:asc` in the order rows became visible'),
    selectParameter(FIELDS),
    groupByParameter(GROUPS, 'occurredAt'),
    INCLUDE_UNKNOWN,
    FORMAT,
  ] as const;
  route(router, '/v1/events', { summary: 'Chain events, newest first', query, answer: list(ref('Event')) }, async (ctx, params) => {
    const { cursor, limit, ...scope } = listParams(params, deps.config.defaultEnvironment);
    // Filters are snake_case as the reference's clients send them; the indexed fields are camelCase.
    const { q, kind, module, package_id: packageId, transaction_digest: transactionDigest, source_id: sourceId, since, until, since_indexed: sinceIndexed, id: ids } = params;
    const sort = boundSort(params.sort, TIMELINE_SORTS[0]);
    const bind = { ...scope, ids, kind, module, packageId, transactionDigest, sourceId, q, since, until, sinceIndexed, sort };
    const withChanges = params.include === 'removed';
    await sendList(ctx, deps, {
      route: '/v1/events',
      bind: { ...bind, include: params.include },
      cursor,
      limit,
      index: 'events',
      query: (reader) => {
        const list = toEventListQuery(bind, reader.generation.currentCycle);
        return withChanges ? throughGeneration(list, reader.generation.indexedAt) : list;
      },
      withChanges,
      countUpTo: TIMELINE_COUNT_UP_TO,
      meta: indexedThrough,
      ids: ids && { asked: ids, fields: ['id'] },
      select: params.select,
      groups: groupRequest(params),
      format: params.format,
      columns: FIELDS,
    });
  });

  detailRoute(router, deps, '/v1/events/:id', 'events', 'Event not found.', { summary: 'An event', answer: one(ref('Event')), mayBeGone: true });
  // Chain objects have no list of their own (the export is their list); `/v1/resolve` links them here.
  detailRoute(router, deps, '/v1/chain-objects/:id', 'chain_objects', 'Chain object not found.', { summary: 'A chain object', answer: one(ref('ChainObject')) });
}
