/**
 * The closed word lists of the export format that the generator draws from: environments,
 * confidence labels, review statuses, entity types, and the 17 types that get current rows.
 * Values only; which row uses which is decided in the row modules.
 */

export const ENVIRONMENTS = ['stillness', 'utopia', 'unknown'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export const CONFIDENCES = ['verified', 'probable', 'reported', 'stale', 'unknown'] as const;
export type Confidence = (typeof CONFIDENCES)[number];

export const REVIEW_STATUSES = ['candidate', 'reviewed', 'published', 'rejected', 'superseded'] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];

/** The entity types the generator writes (the format's 25 minus `event`, which has its own file). */
export const ENTITY_TYPES = [
  'character', 'player', 'tribe', 'alliance', 'item', 'material', 'recipe', 'blueprint', 'ship', 'structure',
  'assembly', 'gate', 'storage', 'market', 'turret', 'system', 'region', 'constellation', 'site',
  'resource_object', 'enemy', 'killmail', 'route', 'unknown',
] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

/** Types exported to current_entities.jsonl, in the writer's order. */
export const CURRENT_TYPES = [
  'character', 'tribe', 'assembly', 'gate', 'storage', 'turret', 'region', 'constellation', 'item', 'material',
  'enemy', 'recipe', 'blueprint', 'ship', 'structure', 'system', 'route',
] as const satisfies readonly EntityType[];
/** Numeric code of an entity type (its position in ENTITY_TYPES). */
export const TYPE_CODE: Readonly<Record<EntityType, number>> = Object.fromEntries(
  ENTITY_TYPES.map((type, code) => [type, code]),
) as Record<EntityType, number>;

export const ENV_CODE: Readonly<Record<Environment, number>> = { stillness: 0, utopia: 1, unknown: 2 };

/** The structure-like types: located in a system, owned by a character, ~15 facts. */
export const DEPLOYABLE_TYPES = ['assembly', 'storage', 'turret', 'gate'] as const satisfies readonly EntityType[];
