/**
 * Single records shown as the API returns them: an event, a killmail (its semantic fields,
 * then a link to the raw record as reported), a source, an artefact. Values keep their JSON
 * types (facts' values vary in type by design).
 */
import { useState } from 'preact/hooks';
import { getJson, type Row, seg } from '../api.ts';
import { Failure, Loading, useAsync } from '../components/async.tsx';
import { Confidence } from '../components/confidence.tsx';
import { formatHash, hrefOf, navigate } from '../route.ts';
import { Actor } from './killmails.tsx';

const ROUTES: Record<string, { path: string; title: string }> = {
  events: { path: '/v1/events', title: 'Event' },
  killmails: { path: '/v1/killmails', title: 'Killmail' },
  sources: { path: '/v1/sources', title: 'Source' },
  artefacts: { path: '/v1/artefacts', title: 'Artefact' },
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
