/**
 * Single records shown as the API returns them: an event, a killmail (its semantic fields,
 * then a link to the raw record as reported), a source, an artefact. Values keep their JSON
 * types (facts' values vary in type by design).
 */
import { useState } from 'preact/hooks';
import { allArtefacts, getJson, type Row, seg } from '../api.ts';
import { Failure, Loading, useAsync } from '../components/async.tsx';
import { Confidence } from '../components/confidence.tsx';
import { formatHash, hrefOf, navigate } from '../route.ts';
import { Actor } from './killmails.tsx';

const ROUTES: Record<string, { path: string; title: string }> = {
  events: { path: '/v1/events', title: 'Event' },
  killmails: { path: '/v1/killmails', title: 'Killmail' },
  sources: { path: '/v1/sources', title: 'Source' },
  artefacts: { path: '/v1/artefacts', title: 'Artefact' },
  'chain-objects': { path: '/v1/chain-objects', title: 'Chain object' },
};

export function RecordPage({ view, id, sub }: { view: string; id: string; sub?: string }) {
  const route = ROUTES[view]!;
  const raw = view === 'killmails' && sub === 'raw';
  const state = useAsync((signal) => getJson<Row>(`${route.path}/${seg(id)}${raw ? '/raw' : ''}`, {}, signal), [view, id, raw]);
  return (
    <article aria-labelledby="record-title">
      <h1 id="record-title">
        {route.title}
        {raw ? ' (raw record as reported)' : ''} <code class="id">{id}</code>
      </h1>
      {view === 'killmails' ? (
        <p>
          {raw ? <a href={formatHash('killmails', {}, id)}>Semantic view</a> : <a href={formatHash('killmails', {}, id, 'raw')}>Raw record as reported</a>}
        </p>
      ) : null}
      {state.status === 'loading' ? <Loading what={route.title.toLowerCase()} /> : null}
      {state.status === 'failed' ? <Failure error={state.error} /> : null}
      {state.status === 'done' ? (
        <>
          {view === 'killmails' && !raw ? <KillmailSummary row={state.value.data} /> : null}
          <Fields row={state.value.data} />
          {view === 'sources' ? <SourceArtefacts sourceId={id} /> : null}
        </>
      ) : null}
    </article>
  );
}

function KillmailSummary({ row }: { row: Row }) {
  return (
    <dl class="identity killmail-summary">
      {(['system', 'victim', 'killer', 'reporter'] as const).map((role) => (
        <div key={role}>
          <dt>{role}</dt>
          <dd>
            <Actor row={row} role={role} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** Every top-level field: ids linked to their view, confidence labels as badges, the rest as JSON. */
export function Fields({ row }: { row: Row }) {
  return (
    <table class="fields" data-testid="record">
      <tbody>
        {Object.entries(row).map(([key, value]) => (
          <tr key={key}>
            <th scope="row">{key}</th>
            <td>{key === 'confidence' ? <Confidence value={value} /> : <Value value={value} link={/Id$|^id$|Ids$/.test(key)} />}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const LINKABLE = /^(source|artefact|event|killmail|character|system|tribe|enemy|assembly|gate|item|ship|structure|region|constellation):\S+$/;

export function Value({ value, link = false }: { value: unknown; link?: boolean }) {
  if (value === null) return <span class="null">null</span>;
  if (typeof value === 'string') return link && LINKABLE.test(value) ? <a href={hrefOf(value)}>{value}</a> : <span class="string">{value}</span>;
  if (typeof value === 'number' || typeof value === 'boolean') return <span class={typeof value}>{String(value)}</span>;
  if (Array.isArray(value) && link && value.every((item) => typeof item === 'string')) {
    return (
      <span>
        {value.map((item, index) => (
          <span key={index}>
            {index > 0 ? ', ' : ''}
            <Value value={item} link />
          </span>
        ))}
      </span>
    );
  }
  return <Json value={value} />;
}

export function Json({ value }: { value: unknown }) {
  return <pre class="json">{JSON.stringify(value, null, 2)}</pre>;
}

/** The API has no route from a source to its artefacts: an artefact opens by its id. */
export function ArtefactOpener() {
  const [id, setId] = useState('');
  return (
    <form class="inline" onSubmit={(event) => (event.preventDefault(), id.trim() && navigate(formatHash('artefacts', {}, id.trim())))}>
      <label>
        Open an artefact by id <input value={id} size={40} placeholder="artefact:…" onInput={(event) => setId((event.target as HTMLInputElement).value)} />
      </label>
      <button type="submit">Open</button>
    </form>
  );
}

/** The artefacts a source imported (from the artefacts export file), newest extraction first. */
export function SourceArtefacts({ sourceId }: { sourceId: string }) {
  const state = useAsync(() => allArtefacts().then((rows) => rows.filter((row) => row.sourceId === sourceId)), [sourceId]);
  return (
    <section aria-labelledby="artefacts-title">
      <h2 id="artefacts-title">Artefacts</h2>
      {state.status === 'loading' ? <Loading what="artefacts" /> : null}
      {state.status === 'failed' ? <Failure error={state.error} /> : null}
      {state.status === 'done' && state.value.length === 0 ? <p class="muted">This source has no artefact in the export.</p> : null}
      {state.status === 'done' && state.value.length > 0 ? (
        <ul class="sources" data-testid="artefacts">
          {[...state.value]
            .sort((a, b) => String(b.extractedAt ?? '').localeCompare(String(a.extractedAt ?? '')))
            .map((row) => (
              <li key={String(row.id)}>
                <a href={hrefOf(String(row.id))}>{String(row.artefactKind ?? row.kind ?? 'artefact')}</a> <span class="tag">{String(row.sourceKind ?? '')}</span>{' '}
                <span class="muted small">
                  {row.extractedAt ? `extracted ${String(row.extractedAt)}` : ''}
                  {row.rowCount !== undefined ? ` · ${Number(row.rowCount).toLocaleString('en')} rows` : ''}
                  {row.supersededByArtefactId ? ' · superseded' : ''}
                </span>
              </li>
            ))}
        </ul>
      ) : null}
    </section>
  );
}
