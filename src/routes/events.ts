/** `/v1/events` (newest first, cycle-scoped, exact filters, ranges, groups) and `/v1/events/{id}`. */
import { cycleGroup, keyword } from '../query/groups.ts';
import { EVENT_TIMELINE } from '../query/timeline.ts';
import type { AppRouter, RouteDeps } from './context.ts';
import { detailRoute } from './detail.ts';
import { one } from './operation.ts';
import { ref } from './records.ts';
import { timelineListRoute } from './timeline.ts';

const GROUPS = [keyword('kind'), keyword('module'), keyword('package_id', 'packageId'), keyword('source_id', 'sourceId', 'sources'), cycleGroup];

export function eventRoutes(router: AppRouter, deps: RouteDeps): void {
  timelineListRoute(router, deps, { path: '/v1/events', summary: 'Chain events, newest first', timeline: EVENT_TIMELINE, record: 'Event', groups: GROUPS });

  detailRoute(router, deps, '/v1/events/:id', 'events', 'Event not found.', { summary: 'An event', answer: one(ref('Event')), mayBeGone: true });
  // Chain objects have no list of their own (the export is their list); `/v1/resolve` links them here.
  detailRoute(router, deps, '/v1/chain-objects/:id', 'chain_objects', 'Chain object not found.', { summary: 'A chain object', answer: one(ref('ChainObject')) });
}
