/**
 * A character's, tribe's or system's activity (`/v1/entities/{id}/activity`): kills and losses
 * (a system: its killmails) with their NPC share and loss types, the top systems and opponents
 * as links, and each side's 7 × 24 UTC grid drawn as a heat map — a cell's shade is its count
 * against the side's busiest hour, its count in its title and label.
 */
import { getJson, type Row, seg } from '../api.ts';
import { Failure, Loading, useAsync } from './async.tsx';
import { formatHash, hrefOf } from '../route.ts';

const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const SIDES = [
  ['kills', 'Kills'],
  ['losses', 'Losses'],
  ['killmails', 'Killmails in this system'],
] as const;
const TOPS: Record<string, string> = { systems: 'Systems', opponents: 'Opponents', killers: 'Killers', victims: 'Victims', killerTribes: 'Killer tribes', victimTribes: 'Victim tribes' };

export function ActivityPanel({ id }: { id: string }) {
  const state = useAsync((signal) => getJson<Row>(`/v1/entities/${seg(id)}/activity`, { cycles: 'all' }, signal), [id]);
  if (state.status === 'loading') return <Loading what="the activity" />;
  if (state.status === 'failed') return <Failure error={state.error} />;
  const activity = state.value.data;
  return (
    <section aria-labelledby="activity-title" class="activity" data-testid="activity">
      <h2 id="activity-title">Activity</h2>
      <p class="muted small">
        All cycles{activity.first ? `, ${String(activity.first)} to ${String(activity.last)}` : ': no killmail'}.{' '}
        <a href={formatHash('battles', activity.entity.entityType === 'system' ? { system: id } : { involved: id })} data-testid="activity-battles">
          Battles
        </a>
      </p>
      {SIDES.filter(([key]) => activity[key]).map(([key, title]) => (
        <Side key={key} name={key} title={title} side={activity[key]} />
      ))}
    </section>
  );
}

function Side({ name, title, side }: { name: string; title: string; side: Row }) {
  const grid: number[][] = side.grid;
  const busiest = Math.max(1, ...grid.flat());
  return (
    <div class="activity-side" data-side={name}>
      <h3>
        {title} <span class="muted">({String(side.count)}, {String(side.npc)} by NPCs)</span>
      </h3>
      {side.lossTypes.length ? <p class="small">{side.lossTypes.map((t: Row) => `${String(t.lossType)} ${String(t.count)}`).join(' · ')}</p> : null}
      <table class="heat" aria-label={`${title} by weekday and hour (UTC)`}>
        <thead>
          <tr>
            <th scope="col"><span class="visually-hidden">Day</span></th>
            {grid[0]!.map((_, hour) => (
              <th scope="col" key={hour}>{hour % 6 === 0 ? String(hour) : ''}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {grid.map((hours, day) => (
            <tr key={day}>
              <th scope="row">{DAYS[day]}</th>
              {hours.map((count, hour) => (
                <td
                  key={hour}
                  data-count={count}
                  title={`${DAYS[day]} ${hour}:00 UTC: ${count}`}
                  aria-label={`${DAYS[day]} ${hour}:00: ${count}`}
                  style={{ background: count ? `rgba(176, 42, 55, ${(0.15 + (0.85 * count) / busiest).toFixed(2)})` : undefined }}
                />
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      <div class="activity-tops">
        {Object.keys(TOPS)
          .filter((top) => Array.isArray(side[top]) && side[top].length > 0)
          .map((top) => (
            <div key={top}>
              <h4>{TOPS[top]}</h4>
              <ol>
                {side[top].map((entry: Row) => (
                  <li key={String(entry.id)}>
                    <a href={hrefOf(String(entry.id))}>{String(entry.id)}</a> <span class="muted">{String(entry.count)}</span>
                  </li>
                ))}
              </ol>
            </div>
          ))}
      </div>
    </div>
  );
}
