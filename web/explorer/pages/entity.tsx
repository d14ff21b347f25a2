/**
 * One entity: identity fields, every fact with its confidence badge, source kind, source link
 * and cycle (facets by confidence and source kind from `group_by`, picked in the URL), the
 * relations as links, the sources, and the claims in time order. Reads `/history` first (one
 * request for the first 200 of each section) and walks the subroutes only when it was cut.
 */
import { type Envelope, getAll, getGroups, getJson, type Group, type Row, seg } from '../api.ts';
import { Failure, Loading, useAsync } from '../components/async.tsx';
import { Confidence, ConfidenceLegend } from '../components/confidence.tsx';
import { Facet } from '../components/facets.tsx';
import { type Column, RowsTable } from '../components/rows-table.tsx';
import { formatHash, hrefOf } from '../route.ts';
import { ActivityPanel } from '../components/activity.tsx';
import { MembershipsPanel } from '../components/memberships.tsx';
import { ArtefactOpener, Value } from './record.tsx';

const MAX_SECTION_ROWS = 2_000;

interface Loaded {
  entity: Row;
  facts: Row[];
  relations: Row[];
  sources: Map<string, Row>;
  /** The names of the entities at the other end of the relations, by id (ids the registry has no entity for stay ids). */
  names: Map<string, string>;
  complete: { facts: boolean; relations: boolean };
  facets: { confidence?: Envelope<Group[]>; sourceKind?: Envelope<Group[]> };
}

async function load(id: string, signal: AbortSignal): Promise<Loaded> {
  const base = `/v1/entities/${seg(id)}`;
  const [history, confidence, sourceKind] = await Promise.all([
    getJson<Row>(`${base}/history`, {}, signal),
    getGroups(`${base}/facts`, {}, 'confidence', signal),
    getGroups(`${base}/facts`, {}, 'sourceKind', signal),
  ]);
  const { entity, truncated = {} } = history.data;
  let facts: Row[] = history.data.facts ?? [];
  let relations: Row[] = history.data.relations ?? [];
  const complete = { facts: true, relations: true };
  if (truncated.facts) ({ rows: facts, complete: complete.facts } = await getAll(`${base}/facts`, {}, MAX_SECTION_ROWS, signal));
  if (truncated.relations) ({ rows: relations, complete: complete.relations } = await getAll(`${base}/relations`, {}, MAX_SECTION_ROWS, signal));
  const sourceRows: Row[] = truncated.sources ? (await getAll(`${base}/sources`, {}, MAX_SECTION_ROWS, signal)).rows : history.data.sources ?? [];
  const sources = new Map(sourceRows.map((row) => [String(row.id), row]));
  // A fact may cite a source the entity's source list does not hold: look each one up once.
  const missing = [...new Set(facts.map((fact) => String(fact.sourceId ?? '')).filter((sourceId) => sourceId && !sources.has(sourceId)))];
  await Promise.all(
    missing.map((sourceId) =>
      getJson<Row>(`/v1/sources/${seg(sourceId)}`, {}, signal).then(
        (answer) => sources.set(sourceId, answer.data),
        () => undefined,
      ),
    ),
  );
  const names = await namesOf(relations, entity, signal);
  return { entity, facts, relations, sources, names, complete, facets: { ...(confidence ? { confidence } : {}), ...(sourceKind ? { sourceKind } : {}) } };
}

/** The other ends' names: `/v1/entities?id=` a hundred at a time, in the entity's environment. */
async function namesOf(relations: Row[], entity: Row, signal: AbortSignal): Promise<Map<string, string>> {
  const others = [...new Set(relations.flatMap((r) => [String(r.subjectEntityId), String(r.objectEntityId)]))].filter((id) => id !== String(entity.id));
  const parts: string[][] = [];
  for (let at = 0; at < others.length; at += 100) parts.push(others.slice(at, at + 100));
  const names = new Map<string, string>();
  const params = { cycles: 'all', environment: String(entity.environment ?? ''), limit: '100', select: 'id,displayName,name' };
  await Promise.all(
    parts.map((part) =>
      getJson<Row[]>('/v1/entities', { ...params, id: part.join('|') }, signal).then(
        (answer) => answer.data.forEach((row) => names.set(String(row.id), String(row.displayName ?? row.name ?? row.id))),
        () => undefined,
      ),
    ),
  );
  return names;
}

export function EntityPage({ id, params }: { id: string; params: Record<string, string> }) {
  const state = useAsync((signal) => load(id, signal), [id]);
  if (state.status === 'loading') return <Loading what="the entity" />;
  if (state.status === 'failed') return <Failure error={state.error} />;
  const { entity, facts, relations, sources, names, complete, facets } = state.value;
  const kindOf = (fact: Row) => (sources.get(String(fact.sourceId))?.kind as string | undefined) ?? 'unknown';
  const pickedConfidence = (params.confidence ?? '').split('|').filter(Boolean);
  const pickedKind = (params.sourceKind ?? '').split('|').filter(Boolean);
  const shown = facts.filter(
    (fact) => (pickedConfidence.length === 0 || pickedConfidence.includes(String(fact.confidence ?? 'unknown'))) && (pickedKind.length === 0 || pickedKind.includes(kindOf(fact))),
  );
  const label = String(entity.displayName ?? entity.name ?? entity.id);
  return (
    <article aria-labelledby="entity-title" class="entity">
      <h1 id="entity-title">
        {label} <span class="tag">{String(entity.entityType ?? '')}</span>
      </h1>
      <Identity entity={entity} />
      <ActorLinks entity={entity} />
      {['character', 'tribe', 'system'].includes(String(entity.entityType)) ? <ActivityPanel id={String(entity.id)} /> : null}
      {entity.entityType === 'tribe' || entity.entityType === 'character' ? <MembershipsPanel id={String(entity.id)} entityType={entity.entityType} /> : null}

      <section aria-labelledby="facts-title">
        <h2 id="facts-title">
          Facts <span class="muted">({facts.length}{complete.facts ? '' : '+'})</span>
        </h2>
        <ConfidenceLegend />
        <div class="with-facets">
          <aside class="facets" aria-label="Fact facets">
            <Facet title="Confidence" param="confidence" groups={facets.confidence} view="entities" params={params} />
            <Facet title="Source kind" param="sourceKind" groups={facets.sourceKind} view="entities" params={params} />
          </aside>
          <div class="results">
            <FactsTable facts={shown} kindOf={kindOf} />
          </div>
        </div>
      </section>

      <section aria-labelledby="relations-title">
        <h2 id="relations-title">
          Relations <span class="muted">({relations.length}{complete.relations ? '' : '+'})</span>
        </h2>
        <Relations relations={relations} self={String(entity.id)} names={names} />
      </section>

      <section aria-labelledby="sources-title">
        <h2 id="sources-title">Sources</h2>
        <ul class="sources">
          {[...sources.values()].map((source) => (
            <li key={String(source.id)}>
              <a href={hrefOf(String(source.id))}>{String(source.title ?? source.id)}</a> <span class="tag">{String(source.kind ?? 'unknown')}</span>
              {source.cycle !== undefined ? <span class="muted small"> cycle {String(source.cycle)}</span> : null}
              {source.locator ? <code class="id"> {String(source.locator)}</code> : null}
            </li>
          ))}
        </ul>
        <p class="muted small">Each source's page lists the artefacts it imported.</p>
        <ArtefactOpener />
      </section>

      <section aria-labelledby="history-title">
        <h2 id="history-title">History</h2>
        <History facts={facts} kindOf={kindOf} />
      </section>
    </article>
  );
}

function Identity({ entity }: { entity: Row }) {
  const fields = ['id', 'slug', 'entityType', 'name', 'displayName', 'environment', 'cycle', 'updatedAt', 'summary'];
  const others = Object.keys(entity).filter((key) => !fields.includes(key));
  return (
    <dl class="identity">
      {fields
        .filter((key) => entity[key] !== undefined)
        .map((key) => (
          <div key={key}>
            <dt>{key}</dt>
            <dd>{String(entity[key])}</dd>
          </div>
        ))}
      {entity.cycle === undefined ? (
        <div>
          <dt>cycle</dt>
          <dd>uncycled</dd>
        </div>
      ) : null}
      {others.map((key) => (
        <div key={key}>
          <dt>{key}</dt>
          <dd>
            <Value value={entity[key]} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** Killmails this entity took part in, through the killmail filters that take its id. */
function ActorLinks({ entity }: { entity: Row }) {
  const id = String(entity.id);
  const links: [string, Record<string, string>][] = [];
  if (entity.entityType === 'character') links.push(['as victim', { victim: id }], ['as killer', { killer: id }], ['as reporter', { reporter: id }]);
  if (entity.entityType === 'system') links.push(['in this system', { system: id }]);
  if (entity.entityType === 'enemy') links.push(['as killer', { killer: id }]);
  if (links.length === 0) return null;
  return (
    <p class="actor-links">
      Killmails:{' '}
      {links.map(([text, params], index) => (
        <span key={text}>
          {index > 0 ? ' · ' : ''}
          <a href={formatHash('killmails', { ...params, cycles: 'all', environment: entity.environment })}>{text}</a>
        </span>
      ))}
    </p>
  );
}

function FactsTable({ facts, kindOf }: { facts: Row[]; kindOf(fact: Row): string }) {
  if (facts.length === 0) return <p class="muted">No facts.</p>;
  const columns: Column<Row>[] = [
    { title: 'Key', cell: (fact) => String(fact.key), rowHeader: true },
    { title: 'Value', cell: (fact) => <Value value={fact.value} />, attributes: { class: 'value' } },
    { title: 'Confidence', cell: (fact) => <Confidence value={fact.confidence} />, attributes: { class: 'confidence' } },
    { title: 'Source kind', cell: kindOf, attributes: { class: 'source-kind' } },
    { title: 'Source', cell: (fact) => (fact.sourceId ? <a href={hrefOf(String(fact.sourceId))}>{String(fact.sourceId)}</a> : '—'), attributes: { class: 'source' } },
    { title: 'Cycle', cell: (fact) => (fact.cycle === undefined || fact.cycle === null ? 'uncycled' : String(fact.cycle)), attributes: { class: 'cycle' } },
    { title: 'Review', cell: (fact) => String(fact.reviewStatus ?? '—'), attributes: { class: 'review' } },
  ];
  return (
    <RowsTable
      class="facts"
      testid="facts"
      columns={columns}
      rows={facts}
      rowKey={(fact) => `${fact.key}|${fact.sourceId}`}
      rowAttributes={(fact) => ({ 'data-key': fact.key, 'data-source': fact.sourceId })}
    />
  );
}

function Relations({ relations, self, names }: { relations: Row[]; self: string; names: Map<string, string> }) {
  if (relations.length === 0) return <p class="muted">No relations.</p>;
  return (
    <ul class="relations" data-testid="relations">
      {relations.map((relation) => {
        const subject = String(relation.subjectEntityId);
        const object = String(relation.objectEntityId);
        const end = (id: string) =>
          id === self ? (
            <strong>this</strong>
          ) : (
            <a href={hrefOf(id)} title={id} data-id={id}>
              {names.get(id) ?? id}
            </a>
          );
        return (
          <li key={`${subject}|${relation.predicate}|${object}|${relation.sourceId}`}>
            {end(subject)} <span class="predicate">{String(relation.predicate)}</span> {end(object)} <Confidence value={relation.confidence} />{' '}
            {relation.sourceId ? (
              <a class="small" href={hrefOf(String(relation.sourceId))}>
                {String(relation.sourceId)}
              </a>
            ) : null}
            {relation.cycle !== undefined ? <span class="muted small"> · cycle {String(relation.cycle)}</span> : null}
          </li>
        );
      })}
    </ul>
  );
}

/** The claims in time order: cycle, then publication instant, with their review status. */
function History({ facts, kindOf }: { facts: Row[]; kindOf(fact: Row): string }) {
  const dated = [...facts].sort((a, b) => (Number(a.cycle ?? 0) - Number(b.cycle ?? 0)) || String(a.publishedAt ?? '').localeCompare(String(b.publishedAt ?? '')));
  if (dated.length === 0) return <p class="muted">No claims.</p>;
  return (
    <ol class="history">
      {dated.map((fact) => (
        <li key={`${fact.key}|${fact.sourceId}`}>
          <span class="muted small">{fact.cycle === undefined ? 'uncycled' : `cycle ${String(fact.cycle)}`}</span> · {fact.publishedAt ? <time>{String(fact.publishedAt)}</time> : 'unpublished'} ·{' '}
          <strong>{String(fact.key)}</strong> {String(fact.reviewStatus ?? '')} <Confidence value={fact.confidence} /> <span class="small">{kindOf(fact)}</span>
        </li>
      ))}
    </ol>
  );
}

