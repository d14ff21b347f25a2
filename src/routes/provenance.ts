/**
 * `/v1/sources` (paged by kind then id; the reference had no cursor, so only its first 200
 * sources were reachable), `/v1/sources/{id}` and `/v1/artefacts/{id}`.
 */
import { LIST_PARAMS, parseListParams, parseQ, takeParams, text } from '../query/params.ts';
import { toSourceListBody } from '../query/provenance.ts';
import type { AppRouter, RouteDeps } from './context.ts';
import { detailRoute } from './detail.ts';
import { sendPage } from './page.ts';

export function provenanceRoutes(router: AppRouter, deps: RouteDeps): void {
  router.get('/v1/sources', async (ctx) => {
    const params = takeParams(ctx.query, [...LIST_PARAMS, 'q', 'kind']);
    const { cursor, limit, ...scope } = parseListParams(params, deps.config.defaultEnvironment);
    const bind = { ...scope, q: parseQ(params.q), kind: text(params, 'kind') };
    await sendPage(ctx, deps, {
      route: '/v1/sources',
      bind,
      cursor,
      limit,
      index: 'sources',
      body: (reader, after) => toSourceListBody({ ...bind, limit }, reader.generation.currentCycle, after),
    });
  });

  detailRoute(router, deps, '/v1/sources/:id', 'sources', 'Source not found.');
  detailRoute(router, deps, '/v1/artefacts/:id', 'source_artefacts', 'Artefact not found.');
}
