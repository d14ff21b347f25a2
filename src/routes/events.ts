/** `/v1/events` (newest first, cycle-scoped, exact filters) and `/v1/events/{id}`. */
import { EVENT_KIND, LIST, MODULE, PACKAGE_ID, Q, SOURCE_ID, TRANSACTION_DIGEST, listParams } from '../query/params.ts';
import { toEventListBody } from '../query/timeline.ts';
import type { AppRouter, RouteDeps } from './context.ts';
import { detailRoute } from './detail.ts';
import { list, one, route } from './operation.ts';
import { sendPage } from './page.ts';
import { ref } from './records.ts';

export function eventRoutes(router: AppRouter, deps: RouteDeps): void {
  const query = [...LIST, Q, EVENT_KIND, MODULE, PACKAGE_ID, TRANSACTION_DIGEST, SOURCE_ID] as const;
  route(router, '/v1/events', { summary: 'Chain events, newest first', query, answer: list(ref('Event')) }, async (ctx, params) => {
    const { cursor, limit, ...scope } = listParams(params, deps.config.defaultEnvironment);
    // Filters are snake_case as the reference's clients send them; the indexed fields are camelCase.
    const { q, kind, module, package_id: packageId, transaction_digest: transactionDigest, source_id: sourceId } = params;
    const bind = { ...scope, kind, module, packageId, transactionDigest, sourceId, q };
    await sendPage(ctx, deps, {
      route: '/v1/events',
      bind,
      cursor,
      limit,
      index: 'events',
      body: (reader, after) => toEventListBody({ ...bind, limit }, reader.generation.currentCycle, after),
    });
  });

  detailRoute(router, deps, '/v1/events/:id', 'events', 'Event not found.', { summary: 'An event', answer: one(ref('Event')) });
}
