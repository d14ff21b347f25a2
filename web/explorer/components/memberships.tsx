/**
 * A tribe's or a character's membership changes (`/v1/memberships`): who joined and who left
 * between the bundle kept before the one shown (the live one, or the pinned one) and that one,
 * each end a link. With no earlier bundle kept there is nothing to compare, and it says so.
 */
import { type Envelope, getJson, type Row } from '../api.ts';
import { Failure, Loading, useAsync } from './async.tsx';
import { hrefOf, pinnedBundle } from '../route.ts';

/** Changes shown at most (one page). */
const SHOWN = 200;

/** The membership changes into the bundle shown (the pinned one, else the live one) from the one kept before it; undefined when none is. */
async function load(by: string, id: string, shown: string | undefined, signal: AbortSignal): Promise<Envelope<Row[]> | undefined> {
  // Asked of the bundle list first (the status page reads it too), not by a 400 of the route.
  const { data: loads } = await getJson<Row[]>('/v1/bundles', { limit: 200 }, signal);
  const kept = loads.filter((load) => load.queryable);
  const to = shown === undefined ? kept.findIndex((load) => load.live) : kept.findIndex((load) => load.bundleId === shown);
  const from = to === -1 ? undefined : kept[to + 1];
  if (from === undefined) return undefined;
  return getJson<Row[]>('/v1/memberships', { [by]: id, from: String(from.bundleId), to: String(kept[to]!.bundleId), limit: SHOWN }, signal);
}

export function MembershipsPanel({ id, entityType }: { id: string; entityType: 'tribe' | 'character' }) {
  const by = entityType === 'tribe' ? 'tribe' : 'character';
  const shown = pinnedBundle();
  const state = useAsync((signal) => load(by, id, shown, signal), [id, by, shown]);
  if (state.status === 'loading') return <Loading what="the membership changes" />;
  if (state.status === 'failed') return <Failure error={state.error} />;
  const answer = state.value;
  return (
    <section aria-labelledby="memberships-title" data-testid="memberships">
      <h2 id="memberships-title">Membership changes</h2>
      {answer === undefined ? (
        <p class="muted small">No earlier bundle is kept to compare this one with.</p>
      ) : (
        <>
          <p class="muted small">
            From bundle <code class="id">{String(answer.meta.from).slice(0, 12)}</code> to <code class="id">{String(answer.meta.to).slice(0, 12)}</code>
            {answer.data.length === 0 ? ': none.' : answer.nextCursor ? ` (the first ${SHOWN}):` : ':'}
          </p>
          <ul class="memberships">
            {answer.data.map((m) => (
              <li key={`${String(m.characterId)} ${String(m.tribeId)}`} data-change={String(m.change)}>
                <a href={hrefOf(String(m.characterId))}>{String(m.characterId)}</a> {m.change === 'joined' ? 'joined' : 'left'}{' '}
                <a href={hrefOf(String(m.tribeId))}>{String(m.tribeId)}</a>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
