/** `/v1/events` (newest first, cycle-scoped, exact filters) and `/v1/events/{id}`. */
import { LIST_PARAMS, parseListParams, parseQ, takeParams, text } from '../query/params.ts';
import { toEventListBody } from '../query/timeline.ts';
import type { AppRouter, RouteDeps } from './context.ts';
import { detailRoute } from './detail.ts';
import { sendPage } from './page.ts';

/** Query parameter → indexed field; snake_case as the reference's clients send them. */
const EVENT_FILTERS = { kind: 'kind', module: 'module', package_id: 'packageId', transaction_digest: 'transactionDigest', source_id: 'sourceId' } as const;

export function eventRoutes(router: AppRouter, deps: RouteDeps): void {
  router.get('/v1/events', async (ctx) => {
    const params = takeParams(ctx.query, [...LIST_PARAMS, 'q', ...Object.keys(EVENT_FILTERS)]);
    const { cursor, limit, ...scope } = parseListParams(params, deps.config.defaultEnvironment);
    const filters = Object.fromEntries(Object.entries(EVENT_FILTERS).map(([param, field]) => [field, text(params, param)]));
    const bind = { ...scope, ...filters, q: parseQ(params.q) };
    await sendPage(ctx, deps, {
      route: '/v1/events',
      bind,
      cursor,
      limit,
      index: 'events',
      body: (reader, after) => toEventListBody({ ...bind, limit }, reader.generation.currentCycle, after),
    });
  });

  detailRoute(router, deps, '/v1/events/:id', 'events', 'Event not found.');
}
