/**
 * `/v1/sources` (paged by kind then id; the reference had no cursor, so only its first 200
 * sources were reachable), `/v1/sources/{id}` and `/v1/artefacts/{id}`.
 */
import { cycleGroup, groupByParameter, keyword } from '../query/groups.ts';
import { FORMAT, IDS, INCLUDE_UNKNOWN, LIST, Q, SOURCE_KIND, listParams } from '../query/route-parameters.ts';
import { selectParameter } from '../query/select.ts';
import { toSourceListQuery } from '../query/provenance.ts';
import type { AppRouter, RouteDeps } from './context.ts';
import { detailRoute } from './detail.ts';
import { list, one, route } from './operation.ts';
import { groupRequest } from './list-request.ts';
import { sendList } from './list.ts';
import { fieldsOf, ref } from './records.ts';

export function provenanceRoutes(router: AppRouter, deps: RouteDeps): void {
  const fields = fieldsOf('Source');
  const query = [...LIST, Q, IDS, SOURCE_KIND, selectParameter(fields), groupByParameter([keyword('kind'), cycleGroup]), INCLUDE_UNKNOWN, FORMAT] as const;
  const summary = 'Sources of the environment and those without one, by kind then id; across cycles unless `cycles`/`cycle` is given';
  route(router, '/v1/sources', { summary, query, answer: list(ref('Source')) }, async (ctx, params) => {
    const { cursor, limit, ...scope } = listParams(params, deps.config.defaultEnvironment);
    const bind = { ...scope, ids: params.id, q: params.q, kind: params.kind };
    await sendList(ctx, deps, {
      route: '/v1/sources',
      bind,
      cursor,
      limit,
      index: 'sources',
      query: ({ currentCycle }) => toSourceListQuery(bind, currentCycle),
      select: params.select,
      groups: groupRequest(params),
      format: params.format,
      columns: fields,
      ids: params.id && { asked: params.id, fields: ['id'] },
    });
  });

  detailRoute(router, deps, '/v1/sources/:id', 'sources', 'Source not found.', { summary: 'A source', answer: one(ref('Source')) });
  detailRoute(router, deps, '/v1/artefacts/:id', 'source_artefacts', 'Artefact not found.', { summary: 'A source artefact', answer: one(ref('Artefact')) });
}
