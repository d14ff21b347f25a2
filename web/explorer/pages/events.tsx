/** The events browser: every `/v1/events` filter, the timeline, kind and module facets. */
import type { Row } from '../api.ts';
import { Confidence } from '../components/confidence.tsx';
import type { Column } from '../components/rows-table.tsx';
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

const COLUMNS: Column<Row>[] = [
  { title: 'Occurred (UTC)', cell: (row) => <time>{String(row.occurredAt ?? '')}</time> },
  { title: 'Kind', cell: (row) => String(row.kind ?? '') },
  { title: 'Module', cell: (row) => String(row.module ?? '') },
  { title: 'Confidence', cell: (row) => (row.payload?.confidence !== undefined ? <Confidence value={row.payload.confidence} /> : <span class="muted">—</span>) },
  { title: 'Source kind', cell: (row) => String(row.payload?.sourceKind ?? '—') },
  { title: 'Cycle', cell: (row) => (row.cycle === undefined ? 'uncycled' : String(row.cycle)) },
  {
    title: 'Event',
    cell: (row) => (
      <a href={hrefOf(String(row.id))} class="id row-id" title={String(row.id)}>
        {String(row.id)}
      </a>
    ),
  },
];

export function EventsPage({ params }: { params: Record<string, string> }) {
  return <TimelineView view="events" path="/v1/events" title="Events" noun="event" fields={FIELDS} facets={FACETS} params={params} columns={COLUMNS} />;
}
