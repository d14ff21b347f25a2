/**
 * Battles (`/v1/battles`, `/v1/battles/{id}`): the list with its filters (system, involved, gap)
 * and a battle's page — its sides side by side, its killmails on a timeline from the first kill
 * to the last (a mark per kill, coloured by the side that made it), then as rows.
 */
import { getJson, type Row, seg } from '../api.ts';
import { Failure, Loading, useAsync } from '../components/async.tsx';
import { Pager } from '../components/pager.tsx';
import { type Column, RowsTable } from '../components/rows-table.tsx';
import { formatHash, hrefOf, navigate } from '../route.ts';
import { Actor } from './killmails.tsx';

const SIDE_TITLES: Record<string, string> = { a: 'Side A', b: 'Side B', npc: 'NPCs' };

/** The list's own parameters: the rest of the hash (environment, cycles) is the shared scope. */
const FILTERS = [
  { param: 'system', label: 'System', placeholder: 'system:stillness:…' },
  { param: 'involved', label: 'Involved', placeholder: 'character or tribe id' },
  { param: 'gap', label: 'Gap (minutes)', placeholder: '15' },
];

function sideSummary(side: Row): string {
  const who = [...side.tribes.map((t: Row) => t.name ?? t.id), ...side.characters.filter((c: Row) => !side.tribes.length).map((c: Row) => c.name ?? c.id)];
  return `${SIDE_TITLES[side.side]}: ${who.slice(0, 3).join(', ')}${who.length > 3 ? ` +${who.length - 3}` : ''} (${side.kills} kills, ${side.losses} losses)`;
}

const COLUMNS: Column<Row>[] = [
  { title: 'Started (UTC)', cell: (b) => <time>{String(b.startedAt)}</time> },
  { title: 'System', cell: (b) => <a href={hrefOf(String(b.systemId))}>{String(b.systemName ?? b.systemId)}</a> },
  { title: 'Kills', cell: (b) => String(b.killCount), attributes: { 'data-role': 'kills' } },
  {
    title: 'Sides',
    cell: (b) => (
      <ul class="plain small">
        {b.sides.map((s: Row) => (
          <li key={s.side}>{sideSummary(s)}</li>
        ))}
      </ul>
    ),
  },
  {
    title: 'Battle',
    cell: (b) => (
      <a href={formatHash('battles', b.gap === 15 ? {} : { gap: String(b.gap) }, String(b.id))} class="id row-id" title={String(b.id)}>
        {String(b.id)}
      </a>
    ),
  },
];

export function BattlesPage({ params }: { params: Record<string, string> }) {
  const query = { cycles: 'all', limit: 25, ...params };
  const state = useAsync((signal) => getJson<Row[]>('/v1/battles', query, signal), [JSON.stringify(query)]);
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const next: Record<string, string> = { ...params };
    delete next.cursor;
    for (const { param } of FILTERS) next[param] = String(form.get(param) ?? '').trim();
    navigate(formatHash('battles', next));
  };
  return (
    <section aria-labelledby="battles-title">
      <h1 id="battles-title">Battles</h1>
      <p class="muted small">Killmails of one system, each within the gap of the one before (15 minutes unless set), two at least.</p>
      <form class="filters" onSubmit={submit}>
        {FILTERS.map(({ param, label, placeholder }) => (
          <label key={param}>
            {label} <input name={param} defaultValue={params[param] ?? ''} placeholder={placeholder} />
          </label>
        ))}
        <button type="submit">Apply</button>
      </form>
      {state.status === 'loading' ? <Loading what="battles" /> : null}
      {state.status === 'failed' ? <Failure error={state.error} /> : null}
      {state.status === 'done' ? (
        <>
          <p class="small" data-testid="battle-count">
            {String(state.value.meta.count ?? state.value.data.length)} battles
          </p>
          <RowsTable class="rows battles" testid="battles" columns={COLUMNS} rows={state.value.data} rowKey={(b) => String(b.id)} rowAttributes={(b) => ({ 'data-id': b.id })} />
          <Pager view="battles" params={params} nextCursor={state.value.nextCursor} rows={state.value.data.length} />
        </>
      ) : null}
    </section>
  );
}

const KILL_COLUMNS: Column<Row>[] = [
  { title: 'Occurred (UTC)', cell: (row) => <time>{String(row.occurredAt ?? '')}</time> },
  { title: 'Victim', cell: (row) => <Actor row={row} role="victim" /> },
  { title: 'Killer', cell: (row) => <Actor row={row} role="killer" /> },
  { title: 'Loss', cell: (row) => String(row.lossType ?? '') },
  {
    title: 'Killmail',
    cell: (row) => (
      <a href={hrefOf(String(row.id))} class="id row-id">
        {String(row.id)}
      </a>
    ),
  },
];

export function BattlePage({ id, params }: { id: string; params: Record<string, string> }) {
  const state = useAsync((signal) => getJson<Row>(`/v1/battles/${seg(id)}`, { gap: params.gap }, signal), [id, params.gap]);
  if (state.status === 'loading') return <Loading what="the battle" />;
  if (state.status === 'failed') return <Failure error={state.error} />;
  const { battle, killmails, killmailsTruncated } = state.value.data;
  return (
    <article aria-labelledby="battle-title" data-testid="battle">
      <h1 id="battle-title">
        Battle in <a href={hrefOf(String(battle.systemId))}>{String(battle.systemName ?? battle.systemId)}</a>
      </h1>
      <p class="muted small">
        {String(battle.killCount)} kills from <time>{String(battle.startedAt)}</time> to <time>{String(battle.endedAt)}</time> (UTC), each within{' '}
        {String(battle.gap)} minutes of the one before.
      </p>
      <div class="sides">
        {battle.sides.map((side: Row) => (
          <section key={side.side} class={`side side-${side.side}`} data-side={side.side} aria-label={SIDE_TITLES[side.side]}>
            <h2>{SIDE_TITLES[side.side]}</h2>
            <p>
              <strong>{String(side.kills)}</strong> kills · <strong>{String(side.losses)}</strong> losses
            </p>
            {side.tribes.length ? <Named list={side.tribes} class="plain" /> : null}
            <Named list={side.characters} class="plain small" />
          </section>
        ))}
      </div>
      <Timeline battle={battle} killmails={killmails} />
      <RowsTable class="rows" testid="battle-killmails" columns={KILL_COLUMNS} rows={killmails} rowKey={(k) => String(k.id)} rowAttributes={(k) => ({ 'data-id': k.id })} />
      {killmailsTruncated ? (
        <p class="small">
          The first {killmails.length} killmails; <a href={formatHash('killmails', { system: String(battle.systemId), cycles: 'all' })}>all killmails of the system</a>.
        </p>
      ) : null}
    </article>
  );
}

/** Tribes or characters of a side, each linked by its name (its id where it has none). */
function Named({ list, class: className }: { list: Row[]; class: string }) {
  return (
    <ul class={className}>
      {list.map((named) => (
        <li key={named.id}>
          <a href={hrefOf(String(named.id))}>{String(named.name ?? named.id)}</a>
        </li>
      ))}
    </ul>
  );
}

/** The battle's killmails as marks on a line from its first kill to its last, each coloured by the side whose member killed (hollow: a killer not resolved). */
function Timeline({ battle, killmails }: { battle: Row; killmails: Row[] }) {
  const start = Date.parse(String(battle.startedAt));
  const span = Math.max(1, Date.parse(String(battle.endedAt)) - start);
  const sideOf = new Map<string, string>();
  for (const side of battle.sides as Row[]) for (const c of side.characters as Row[]) sideOf.set(String(c.id), String(side.side));
  return (
    <figure class="battle-timeline" aria-label="Killmails over time">
      <div class="line">
        {killmails.map((k) => {
          const at = (Date.parse(String(k.occurredAt)) - start) / span;
          const killer = k.killer?.entityType === 'character' ? String(k.killer.entityId) : undefined;
          // A kill by no known character: an NPC's when the labels say so, else nobody's (an unresolved killer).
          const side = killer ? (sideOf.get(killer) ?? 'none') : Array.isArray(k.labels) && k.labels.includes('npc') ? 'npc' : 'none';
          return (
            <a
              key={k.id}
              href={hrefOf(String(k.id))}
              class={`mark mark-${side}`}
              style={{ left: `${(at * 100).toFixed(2)}%` }}
              title={`${String(k.occurredAt)}: ${String(k.killer?.displayName ?? 'Unknown')} killed ${String(k.victim?.displayName ?? 'Unknown')}`}
              data-testid="timeline-mark"
            >
              <span class="visually-hidden">{String(k.id)}</span>
            </a>
          );
        })}
      </div>
      <figcaption class="muted small">
        <time>{String(battle.startedAt)}</time> → <time>{String(battle.endedAt)}</time>
      </figcaption>
    </figure>
  );
}
