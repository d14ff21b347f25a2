/**
 * Collections: the typed entity routes (`/v1/{collection}`) and the current routes
 * (`/v1/current/{collection}`), with the entity type or relation predicates behind each.
 * Loader (which collection a current row belongs to) and gateway (which routes exist)
 * both read this table.
 */

/** Typed collection → entity type. */
export const TYPED_COLLECTIONS = {
  systems: 'system',
  characters: 'character',
  tribes: 'tribe',
  assemblies: 'assembly',
  gates: 'gate',
  regions: 'region',
  constellations: 'constellation',
  items: 'item',
  materials: 'material',
  enemies: 'enemy',
  recipes: 'recipe',
  blueprints: 'blueprint',
  ships: 'ship',
  structures: 'structure',
} as const satisfies Record<string, string>;

/**
 * Current entity collections → entity type, and whether the route falls back to plain
 * entities when the collection has no current rows at all (characters and tribes do not:
 * a stale identity is worse than none).
 */
export const CURRENT_ENTITY_COLLECTIONS = {
  characters: { entityType: 'character', fallback: false },
  tribes: { entityType: 'tribe', fallback: false },
  assemblies: { entityType: 'assembly', fallback: true },
  gates: { entityType: 'gate', fallback: true },
  storage: { entityType: 'storage', fallback: true },
  turrets: { entityType: 'turret', fallback: true },
  regions: { entityType: 'region', fallback: true },
  constellations: { entityType: 'constellation', fallback: true },
  items: { entityType: 'item', fallback: true },
  materials: { entityType: 'material', fallback: true },
  enemies: { entityType: 'enemy', fallback: true },
  recipes: { entityType: 'recipe', fallback: true },
  blueprints: { entityType: 'blueprint', fallback: true },
  ships: { entityType: 'ship', fallback: true },
  structures: { entityType: 'structure', fallback: true },
  systems: { entityType: 'system', fallback: true },
  routes: { entityType: 'route', fallback: true },
} as const satisfies Record<string, { entityType: string; fallback: boolean }>;

/** Current relation feeds → the predicates they carry. */
export const CURRENT_RELATION_COLLECTIONS = {
  ownership: ['owned_by'],
  'route-edges': ['links_to', 'observed_between'],
} as const satisfies Record<string, readonly string[]>;

export type TypedCollection = keyof typeof TYPED_COLLECTIONS;
export type CurrentEntityCollection = keyof typeof CURRENT_ENTITY_COLLECTIONS;
export type CurrentRelationCollection = keyof typeof CURRENT_RELATION_COLLECTIONS;

const ENTITY_TYPE_TO_CURRENT = new Map<string, CurrentEntityCollection>(
  Object.entries(CURRENT_ENTITY_COLLECTIONS).map(([c, d]) => [d.entityType, c as CurrentEntityCollection]),
);
const PREDICATE_TO_CURRENT = new Map<string, CurrentRelationCollection>(
  Object.entries(CURRENT_RELATION_COLLECTIONS).flatMap(([c, ps]) => ps.map((p) => [p, c as CurrentRelationCollection])),
);

/** The current collection of an entity type, if it has one. */
export function currentCollectionOfType(entityType: string | undefined): CurrentEntityCollection | undefined {
  return entityType === undefined ? undefined : ENTITY_TYPE_TO_CURRENT.get(entityType);
}

/** The current relation feed of a predicate, if it has one. */
export function currentCollectionOfPredicate(predicate: string | undefined): CurrentRelationCollection | undefined {
  return predicate === undefined ? undefined : PREDICATE_TO_CURRENT.get(predicate);
}
