/**
 * `/v1/resolve/{value}`: what an identifier is — the records it names, as `{type, id, href,
 * matched}` (src/query/resolve.ts), in one search. Nothing found is an empty list, not a 404:
 * the value may well be an id, just not one of this registry; a value that cannot be any id
 * (spaces, too long) is a 400.
 */
import { toEnvelope } from '../http/envelope.ts';
import { RESOLVE_INDICES, resolvedOf, toResolveBody } from '../query/resolve.ts';
import { type AppRouter, type RouteDeps, metaOf, requestReader } from './context.ts';
import { one, route } from './operation.ts';
import { ref } from './records.ts';

export function resolveRoutes(router: AppRouter, deps: RouteDeps): void {
  const summary = 'The records an identifier names: entity id, slug or address, killmail, event id or transaction digest, source, artefact id or sha256, chain object id or object id';
  route(router, '/v1/resolve/:value', { summary, query: [], answer: one({ type: 'array', items: ref('Resolved') }) }, async (ctx) => {
    const reader = await requestReader(ctx, deps.search);
    const value = ctx.params.value!;
    const hits = await reader.searchAcross(RESOLVE_INDICES, toResolveBody(value, reader.indexName));
    ctx.body = toEnvelope(resolvedOf(value, hits), metaOf(ctx, deps));
  });
}
