/**
 * The killmails browser: every `/v1/killmails` filter (npc included), the timeline, facets by
 * NPC and system. Actors are shown as the API resolved them: a name only for a resolved actor
 * (an NPC killer only when the API proves it: `killer.isNpc` with the enemy entity resolved);
 * otherwise the semantic fields as returned (`Unknown`, the raw id, the NPC type id, warnings).
 */
import type { Row } from '../api.ts';
import { Confidence } from '../components/confidence.tsx';
import type { Column } from '../components/rows-table.tsx';
import { TimelineView } from '../components/timeline-view.tsx';
import { formatHash, hrefOf } from '../route.ts';

const FIELDS = [
  { param: 'system', label: 'System', placeholder: 'system:stillness:…' },
  { param: 'victim', label: 'Victim', placeholder: 'character:…' },
  { param: 'killer', label: 'Killer', placeholder: 'character id, NPC type id, entity id' },
  { param: 'reporter', label: 'Reporter', placeholder: 'character:…' },
  { param: 'npc', label: 'NPC killer', choices: ['true', 'false'] },
  { param: 'label', label: 'Label', choices: ['npc', 'structure', 'same_tribe', 'unresolved'] },
];

const FACETS = [
  { title: 'NPC killer', field: 'npc', param: 'npc', single: true },
  { title: 'Label', field: 'label', param: 'label' },
  { title: 'System', field: 'system', param: 'system' },
];

const COLUMNS: Column<Row>[] = [
  { title: 'Occurred (UTC)', cell: (row) => <time>{String(row.occurredAt ?? '')}</time> },
  { title: 'System', cell: (row) => <Actor row={row} role="system" /> },
  { title: 'Victim', cell: (row) => <Actor row={row} role="victim" /> },
  { title: 'Killer', cell: (row) => <Actor row={row} role="killer" />, attributes: { 'data-role': 'killer' } },
  { title: 'Loss', cell: (row) => String(row.lossType ?? '') },
  { title: 'Labels', cell: (row) => <Labels row={row} />, attributes: { 'data-role': 'labels' } },
  {
    title: 'Killmail',
    cell: (row) => (
      <>
        <a href={hrefOf(String(row.id))} class="id row-id" title={String(row.id)}>
          {String(row.id)}
        </a>{' '}
        <a href={formatHash('killmails', {}, String(row.id), 'raw')} class="small">
          raw
        </a>
      </>
    ),
  },
];

export function KillmailsPage({ params }: { params: Record<string, string> }) {
  return <TimelineView view="killmails" path="/v1/killmails" title="Killmails" noun="killmail" fields={FIELDS} facets={FACETS} params={params} columns={COLUMNS} />;
}

/** The killmail's labels, and the link to its chain event (its proof) when it has one. */
function Labels({ row }: { row: Row }) {
  const labels: string[] = Array.isArray(row.labels) ? row.labels.map(String) : [];
  const proof: Row | undefined = row.proof && typeof row.proof === 'object' ? row.proof : undefined;
  return (
    <>
      {labels.map((label) => (
        <span key={label} class={`tag label-${label}`} data-label={label}>
          {label.replace('_', ' ')}
        </span>
      ))}
      {proof ? (
        <a href={hrefOf(String(proof.eventId))} class="small proof" title={proof.transactionDigest ? `transaction ${String(proof.transactionDigest)}` : String(proof.eventId)}>
          {' '}
          proof
        </a>
      ) : null}
    </>
  );
}

/**
 * One actor of a killmail. Resolved (`entityId`): its display name, linked. Not resolved: the
 * display name as returned (the API says `Unknown`), marked unresolved, with the raw id and,
 * for NPC killers, the type id. Never a name from anywhere else.
 */
export function Actor({ row, role }: { row: Row; role: 'system' | 'victim' | 'killer' | 'reporter' }) {
  const actor: Row | undefined = row[role] && typeof row[role] === 'object' ? row[role] : undefined;
  if (!actor) return <span class="muted">—</span>;
  const resolved = typeof actor.entityId === 'string';
  const npc = role === 'killer' && actor.isNpc === true;
  const typeId = role === 'killer' ? (actor.typeId ?? row.killerTypeId) : undefined;
  const name = String(actor.displayName ?? 'Unknown');
  return (
    <span class={`actor${resolved ? '' : ' unresolved'}`} data-resolved={resolved}>
      {resolved ? (
        <a href={hrefOf(String(actor.entityId))} class="actor-name">
          {name}
        </a>
      ) : (
        <span class="actor-name">{name}</span>
      )}
      {npc ? <span class="tag npc">NPC</span> : null}
      {typeId !== undefined ? <span class="muted small"> type {String(typeId)}</span> : null}
      {!resolved ? <span class="muted small"> (not resolved{actor.rawId ? `: ${String(actor.rawId)}` : ''})</span> : null}{' '}
      {actor.confidence !== undefined ? <Confidence value={actor.confidence} /> : null}
      {Array.isArray(actor.warnings) && actor.warnings.length > 0 ? (
        <span class="warning small" title={actor.warnings.join('; ')}>
          {' '}
          ⚠ {String(actor.warnings[0])}
        </span>
      ) : null}
    </span>
  );
}
