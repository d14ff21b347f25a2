/**
 * Killmail actors as the reference's clients read them: `systemName`, `victimName`,
 * `killerName`, `reporterName` and the resolved `system`/`victim`/`killer`/`reporter` values,
 * filled from the registry's own entity records when the exported row lacks them.
 *
 * Names only ever come from entity rows: an NPC killer is looked up as
 * `enemy:<environment>:type:<killerTypeId>` (never from a raw chain `killer_id`), and an actor
 * with no entity keeps what the export says. Pure: rows and entities in, rows out.
 */
import { type Row, str } from './description.ts';

const ACTORS = [
  { key: 'system', idField: 'systemId', nameField: 'systemName' },
  { key: 'victim', idField: 'victimCharacterId', nameField: 'victimName' },
  { key: 'killer', idField: 'killerCharacterId', nameField: 'killerName' },
  { key: 'reporter', idField: 'reporterCharacterId', nameField: 'reporterName' },
] as const;

type Actor = (typeof ACTORS)[number];
type Resolved = Record<string, unknown>;

function resolvedOf(row: Row, actor: Actor): Resolved | undefined {
  const value = row[actor.key];
  return value !== null && typeof value === 'object' ? (value as Resolved) : undefined;
}

function killerTypeId(row: Row): string | undefined {
  return str(row.killerTypeId) ?? str(resolvedOf(row, ACTORS[2])?.typeId);
}

/** The entity id to look an actor up by. */
function lookupId(row: Row, actor: Actor): string | undefined {
  if (actor.key === 'killer') {
    const typeId = killerTypeId(row);
    if (typeId !== undefined) return `enemy:${str(row.environment) ?? ''}:type:${typeId}`;
  }
  return str(row[actor.idField]) ?? str(resolvedOf(row, actor)?.entityId);
}

/** Entity ids to fetch for a page of killmails (one `mget` per page). */
export function actorEntityIds(rows: readonly Row[]): string[] {
  const ids = new Set<string>();
  for (const row of rows) for (const actor of ACTORS) {
    const id = lookupId(row, actor);
    if (id !== undefined) ids.add(id);
  }
  return [...ids];
}

/** A killmail with names and unresolved actors filled from the entities found. */
export function withActors(row: Row, entities: ReadonlyMap<string, Row>): Row {
  const out: Row = { ...row };
  for (const actor of ACTORS) {
    const id = lookupId(row, actor);
    const entity = id === undefined ? undefined : entities.get(id);
    if (!entity || id === undefined) continue;
    const label = str(entity.displayName) ?? str(entity.name);
    // A label equal to the raw id says nothing; the reference does not copy it either.
    if (label !== undefined && label !== id && str(row[actor.nameField]) === undefined) out[actor.nameField] = label;
    const current = resolvedOf(row, actor);
    if (current === undefined || current.entityType === 'unknown') {
      const confidence = str(current?.confidence);
      out[actor.key] = {
        entityId: id,
        entityType: str(entity.entityType) ?? 'unknown',
        displayName: label ?? id,
        ...(actor.key === 'killer' && killerTypeId(row) !== undefined ? { typeId: killerTypeId(row), isNpc: entity.entityType === 'enemy' } : {}),
        confidence: confidence !== undefined && confidence !== 'unknown' ? confidence : 'verified',
      };
    }
  }
  return out;
}

/** What a killmail list shows: actors filled, the bulky `raw` chain payload left out (the detail has it). */
export function listView(row: Row, entities: ReadonlyMap<string, Row>): Row {
  const { raw: _raw, ...listed } = row;
  return withActors(listed, entities);
}

/**
 * The detail: the exported row with the list view's actors and names laid over it. Same keys,
 * same order as `withActors(row)`: the view holds the row's keys but `raw`, plus the names it added.
 */
export function detailOf(original: Row, view: Row): Row {
  return { ...original, ...view };
}

/** The row as the chain reported it: every field but the semantic ones the registry derived. */
const SEMANTIC_FIELDS = new Set(['kind', 'system', 'victim', 'killer', 'reporter', 'summaryText', 'sources', 'warnings']);

export function rawRecord(row: Row): Row {
  return Object.fromEntries(Object.entries(row).filter(([key]) => !SEMANTIC_FIELDS.has(key)));
}
