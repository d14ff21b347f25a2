/**
 * A browser of an instant-ordered list (events, killmails): a filter form holding every
 * filter of the route (several values separated by `|`, `since`/`until` as ISO instants),
 * scope, sort and interval selectors, the live switch, the timeline of the matching rows, facet
 * chips, the total, the page of rows (with the rows the stream sent while live) and the pager.
 * All of it is the URL's state.
 */
import { apiUrl, type Envelope, getFacets, getGroups, getJson, type Group, type Row } from '../api.ts';
import { formatHash, navigate, pinnedBundle } from '../route.ts';
import { Failure, Loading, useAsync } from './async.tsx';
import { Downloads } from './downloads.tsx';
import { Facet } from './facets.tsx';
import { LiveSwitch, useLiveRows, withLiveRows } from './live.tsx';
import { type Column, RowsTable } from './rows-table.tsx';
import { CountLine, Pager } from './pager.tsx';
import { ScopeControls } from './scope.tsx';
import { bucketEnd, bucketStart, type Interval, INTERVALS, Timeline } from './timeline.tsx';

export const PAGE_SIZE = 50;

export interface FilterField {
  param: string;
  label: string;
  placeholder?: string;
  /** A fixed choice (npc) instead of free text. */
  choices?: string[];
}

export interface TimelineViewProps {
  view: string;
  path: string;
  title: string;
  noun: string;
  fields: FilterField[];
  /** Facet chips: `single` for filters that take one value (npc). */
  facets: { title: string; field: string; param: string; single?: boolean }[];
  params: Record<string, string>;
  /** The columns of the page of rows. */
  columns: readonly Column<Row>[];
}

interface Answer {
  page: Envelope<Row[]>;
  timeline: { groups: Envelope<Group[]>; interval: Interval } | undefined;
  facets: (Envelope<Group[]> | undefined)[];
}

/**
 * The histogram at the interval asked for, or the next coarser one the gateway accepts (it
 * refuses more than 1,000 buckets).
 */
async function histogram(path: string, filters: Record<string, string | undefined>, interval: Interval, signal: AbortSignal): Promise<Answer['timeline']> {
  for (const candidate of INTERVALS.slice(INTERVALS.indexOf(interval))) {
    const groups = await getGroups(path, filters, `occurredAt:${candidate}`, signal);
    if (groups) return { groups, interval: candidate };
  }
  return undefined;
}

export function TimelineView({ view, path, title, noun, fields, facets, params, columns }: TimelineViewProps) {
  const names = ['environment', 'cycles', 'q', 'since', 'until', ...fields.map((field) => field.param)];
  const filters = Object.fromEntries(names.map((name) => [name, params[name]]));
  const interval = (INTERVALS as readonly string[]).includes(params.interval ?? '') ? (params.interval as Interval) : 'day';
  const state = useAsync<Answer>(
    async (signal) => {
      const [page, timeline, facetGroups] = await Promise.all([
        getJson<Row[]>(path, { ...filters, sort: params.sort, limit: PAGE_SIZE, cursor: params.cursor }, signal),
        histogram(path, filters, interval, signal),
        // One request for every facet: the gateway counts each without its own filter.
        getFacets(path, filters, facets.map((facet) => facet.field), signal),
      ]);
      return { page, timeline, facets: facets.map((facet) => facetGroups[facet.field]) };
    },
    [JSON.stringify(params)],
  );
  // Live: the stream of the list's filters (it takes no paging, sort or select), from the
  // generation the page was read from; reopened whenever the page is read again.
  // A pinned bundle is history: nothing new comes to it.
  const live = params.live === 'on' && !pinnedBundle();
  const page = state.status === 'done' ? state.value.page : undefined;
  const stream = useLiveRows(live && page ? apiUrl(`${path}/stream`, { ...filters, since_indexed: page.meta.indexedThrough }) : undefined);
  const liveIds = new Set(stream.rows.map((row) => String(row.id)));
  // The list is newest first unless sorted oldest first: arriving rows go on top, or at the bottom.
  const shown = page ? withLiveRows(page.data, stream.rows, params.sort !== 'occurredAt:asc') : [];
  const { cursor: _cursor, ...rest } = params;
  const go = (change: Record<string, string | undefined>) => navigate(formatHash(view, { ...rest, ...change }));
  const narrow = (key: string, used: Interval) => go({ since: bucketStart(key), until: bucketEnd(key, used) });
  return (
    <section aria-labelledby="list-title">
      <h1 id="list-title">{title}</h1>
      <FilterForm fields={fields} params={params} onApply={(values) => go(values)} />
      <div class="toolbar">
        <ScopeControls view={view} params={params} />
        <label>
          Order{' '}
          <select value={params.sort ?? ''} onChange={(event) => go({ sort: (event.target as HTMLSelectElement).value || undefined })}>
            <option value="">newest first</option>
            <option value="occurredAt:asc">oldest first</option>
          </select>
        </label>
        <label>
          Timeline by{' '}
          <select value={interval} onChange={(event) => go({ interval: (event.target as HTMLSelectElement).value })}>
            {INTERVALS.map((value) => (
              <option key={value} value={value}>
                {value}
              </option>
            ))}
          </select>
        </label>
        {params.since || params.until ? (
          <button type="button" onClick={() => go({ since: undefined, until: undefined })}>
            Clear the time range
          </button>
        ) : null}
        {pinnedBundle() ? null : <LiveSwitch on={live} status={live && !page ? 'connecting' : stream.status} count={stream.rows.length} onToggle={() => go({ live: live ? undefined : 'on' })} />}
      </div>
      {state.status === 'loading' ? <Loading what={`${noun}s`} /> : null}
      {state.status === 'failed' ? <Failure error={state.error} /> : null}
      {state.status === 'done' ? (
        <>
          {state.value.timeline ? (
            <Timeline buckets={state.value.timeline.groups.data} interval={state.value.timeline.interval} noun={noun} onPick={(key) => narrow(key, state.value.timeline!.interval)} />
          ) : null}
          <div class="with-facets">
            <aside class="facets" aria-label="Facets">
              {facets.map((facet, index) => (
                <Facet key={facet.param} title={facet.title} param={facet.param} groups={state.value.facets[index]} view={view} params={params} single={facet.single} />
              ))}
            </aside>
            <div class="results">
              <CountLine count={state.value.page.meta.count} exact={state.value.page.meta.countIsExact} noun={noun} />
              {shown.length === 0 ? <p class="muted">Nothing matches.</p> : (
                <RowsTable
                  class="rows"
                  testid="rows"
                  columns={columns}
                  rows={shown}
                  rowKey={(row) => String(row.id)}
                  rowAttributes={(row) => ({ 'data-id': row.id, 'data-live': liveIds.has(String(row.id)) ? 'true' : undefined })}
                />
              )}
              <Pager view={view} params={params} nextCursor={state.value.page.nextCursor} rows={state.value.page.data.length} />
              <Downloads path={path} params={{ ...filters, sort: params.sort }} />
            </div>
          </div>
        </>
      ) : null}
    </section>
  );
}

function FilterForm({ fields, params, onApply }: { fields: FilterField[]; params: Record<string, string>; onApply(values: Record<string, string | undefined>): void }) {
  const all: FilterField[] = [
    ...fields,
    { param: 'q', label: 'Words or ids', placeholder: 'text' },
    { param: 'since', label: 'Since (inclusive)', placeholder: '2026-06-01T00:00:00Z' },
    { param: 'until', label: 'Until (exclusive)', placeholder: '2026-07-01T00:00:00Z' },
  ];
  return (
    <form
      class="filters"
      key={JSON.stringify(params)}
      onSubmit={(event) => {
        event.preventDefault();
        const data = new FormData(event.currentTarget as HTMLFormElement);
        onApply(Object.fromEntries(all.map((field) => [field.param, String(data.get(field.param) ?? '').trim() || undefined])));
      }}
    >
      {all.map((field) => (
        <label key={field.param}>
          {field.label}
          {field.choices ? (
            <select name={field.param} defaultValue={params[field.param] ?? ''}>
              <option value="">any</option>
              {field.choices.map((choice) => (
                <option key={choice} value={choice}>
                  {choice}
                </option>
              ))}
            </select>
          ) : (
            <input name={field.param} defaultValue={params[field.param] ?? ''} placeholder={field.placeholder} />
          )}
        </label>
      ))}
      <button type="submit">Apply filters</button>
      <p class="muted small hint">Several values: separate them with | (for example gate.jump|gate.linked).</p>
    </form>
  );
}
