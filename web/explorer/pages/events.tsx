/** The events browser: every `/v1/events` filter, the timeline, kind and module facets. */
import type { Row } from '../api.ts';
import { Confidence } from '../components/confidence.tsx';
import { TimelineView } from '../components/timeline-view.tsx';
import { hrefOf } from '../route.ts';

const FIELDS = [
  { param: 'kind', label: 'Kind', placeholder: 'gate.jump|killmail.created' },
  { param: 'module', label: 'Module', placeholder: 'gate' },
  { param: 'package_id', label: 'Package id', placeholder: '0x…' },
  { param: 'transaction_digest', label: 'Transaction digest' },
  { param: 'source_id', label: 'Source id', placeholder: 'source:…' },
];

const FACETS = [
  { title: 'Kind', field: 'kind', param: 'kind' },
  { title: 'Module', field: 'module', param: 'module' },
];

export function EventsPage({ params }: { params: Record<string, string> }) {
  return <TimelineView view="events" path="/v1/events" title="Events" noun="event" fields={FIELDS} facets={FACETS} params={params} rows={(rows) => <EventRows rows={rows} />} />;
}

function EventRows({ rows }: { rows: Row[] }) {
  return (
    <div class="scroll">
      <table class="rows" data-testid="rows">
        <thead>
          <tr>
            <th scope="col">Occurred (UTC)</th>
            <th scope="col">Kind</th>
            <th scope="col">Module</th>
            <th scope="col">Confidence</th>
            <th scope="col">Source kind</th>
            <th scope="col">Cycle</th>
            <th scope="col">Event</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={String(row.id)} data-id={row.id}>
              <td>
                <time>{String(row.occurredAt ?? '')}</time>
              </td>
              <td>{String(row.kind ?? '')}</td>
              <td>{String(row.module ?? '')}</td>
              <td>{row.payload?.confidence !== undefined ? <Confidence value={row.payload.confidence} /> : <span class="muted">—</span>}</td>
              <td>{String(row.payload?.sourceKind ?? '—')}</td>
              <td>{row.cycle === undefined ? 'uncycled' : String(row.cycle)}</td>
              <td>
                <a href={hrefOf(String(row.id))} class="id row-id" title={String(row.id)}>
                  {String(row.id)}
                </a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
