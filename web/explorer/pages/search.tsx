/**
 * Search results: `/v1/search` with the URL's parameters, the total from `meta.count`, facet
 * chips (type, environment, cycle) from one `group_by` request (each facet counted without its
 * own filter, so the other values stay pickable), scope and sort selectors, and cursor paging.
 */
import { type Envelope, getFacets, getJson, type Group, type Row } from '../api.ts';
import { Failure, Loading, useAsync } from '../components/async.tsx';
import { Downloads } from '../components/downloads.tsx';
import { Facet } from '../components/facets.tsx';
import { CountLine, Pager } from '../components/pager.tsx';
import { ScopeControls } from '../components/scope.tsx';
import { formatHash, hrefOf, navigate } from '../route.ts';

export const PAGE_SIZE = 20;
const FILTERS = ['q', 'type', 'environment', 'cycles', 'profile'] as const;

interface Answer {
  page: Envelope<Row[]>;
  facets: Record<string, Envelope<Group[]> | undefined>;
}

export function SearchPage({ params }: { params: Record<string, string> }) {
  const filters = Object.fromEntries(FILTERS.map((name) => [name, params[name]]));
  const state = useAsync<Answer>(
    async (signal) => {
      // One request for the three facets: the gateway counts each without its own filter.
      const [page, facets] = await Promise.all([
        getJson<Row[]>('/v1/search', { ...filters, sort: params.sort, limit: PAGE_SIZE, cursor: params.cursor }, signal),
        getFacets('/v1/search', filters, ['entityType', 'environment', 'cycle'], signal),
      ]);
      return { page, facets: { type: facets.entityType, environment: facets.environment, cycle: facets.cycle } };
    },
    [JSON.stringify(params)],
  );
  const sorts = params.q ? ['relevance', 'label:asc', 'updatedAt:desc'] : ['label:asc', 'updatedAt:desc'];
  return (
    <section aria-labelledby="search-title">
      <h1 id="search-title">{params.q ? <>Results for “{params.q}”</> : 'Entities'}</h1>
      <div class="toolbar">
        <ScopeControls view="search" params={params} />
        <label>
          Sort{' '}
          <select
            value={params.sort ?? ''}
            onChange={(event) => {
              const { cursor: _cursor, ...rest } = params;
              navigate(formatHash('search', { ...rest, sort: (event.target as HTMLSelectElement).value || undefined }));
            }}
          >
            <option value="">default ({params.q ? 'relevance' : 'label'})</option>
            {sorts.map((sort) => (
              <option key={sort} value={sort}>
                {sort}
              </option>
            ))}
          </select>
        </label>
      </div>
      {state.status === 'loading' ? <Loading what="results" /> : null}
      {state.status === 'failed' ? <Failure error={state.error} /> : null}
      {state.status === 'done' ? (
        <div class="with-facets">
          <aside class="facets" aria-label="Facets">
            <Facet title="Type" param="type" groups={state.value.facets.type} view="search" params={params} />
            <Facet title="Environment" param="environment" groups={state.value.facets.environment} view="search" params={params} single />
            <Facet title="Cycle" param="cycles" groups={state.value.facets.cycle} view="search" params={params} join="," unknownLabel="uncycled" />
          </aside>
          <div class="results">
            <CountLine count={state.value.page.meta.count} exact={state.value.page.meta.countIsExact} noun="entity" plural="entities" />
            <EntityList rows={state.value.page.data} />
            <Pager view="search" params={params} nextCursor={state.value.page.nextCursor} rows={state.value.page.data.length} />
            <Downloads path="/v1/search" params={{ ...filters, sort: params.sort }} />
          </div>
        </div>
      ) : null}
    </section>
  );
}

function EntityList({ rows }: { rows: Row[] }) {
  if (rows.length === 0) return <p class="muted">Nothing matches.</p>;
  return (
    <ol class="entity-list" data-testid="results">
      {rows.map((row) => (
        <li key={String(row.id)} data-id={row.id}>
          <a href={hrefOf(String(row.id))} class="title">
            {String(row.displayName ?? row.name ?? row.id)}
          </a>{' '}
          <span class="tag">{String(row.entityType ?? '')}</span>
          <span class="muted small">
            {' '}
            {String(row.environment ?? '')}
            {row.cycle !== undefined ? ` · cycle ${row.cycle}` : ' · uncycled'}
          </span>
          {row.summary ? <p class="summary">{String(row.summary)}</p> : null}
          <code class="id">{String(row.id)}</code>
        </li>
      ))}
    </ol>
  );
}
