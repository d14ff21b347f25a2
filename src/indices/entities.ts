/** The `entities` index: one document per entity id (last row wins), sorted by label then id. */
import { hash } from 'node:crypto';
import mapping from '../../mappings/entities.json' with { type: 'json' };
import { declaredCycle } from './cycle.ts';
import { type IndexDescription, type MappingFile, tokensOf, isPlaceholder, required, sortLabel, str } from './description.ts';
import { toInstant } from '../time/instant.ts';

export interface EntityDoc {
  id: string;
  slug: string;
  entityType: string;
  environment: string;
  cycle: number;
  /** Static type id of `…:type:<id>` entities (items, enemies, ...). */
  typeId?: string;
  name?: string;
  displayName?: string;
  summary?: string;
  tokens: string[];
  /** Sort key: displayName, else name, else id (folded to lower case by the mapping). */
  label: string;
  /** The label is a registry placeholder, not a known name (`profile=placeholder`). */
  placeholder: boolean;
  updatedAt?: string;
  /** Completion inputs for `/v1/autocomplete` (see `suggestInputs`). */
  suggest: { input: string[]; weight: number; contexts: { scope: string[] } }[];
  row: Record<string, unknown>;
}

/** Every cycle, in a completion context value (`stillness|*`). */
export const ANY_CYCLE = '*';

/**
 * A completion context value: environment, cycle (or ANY_CYCLE) and, when given, entity type.
 * Contexts filter as a disjunction, so the one value ANDs what a scoped list filters on.
 */
export function scopeContext(environment: string, cycle: number | typeof ANY_CYCLE, entityType?: string): string {
  return entityType === undefined ? `${environment}|${cycle}` : `${environment}|${cycle}|${entityType}`;
}

/** Weights a rank holds: 2,000 ranks of 2^13 stay under 2^24, the largest integer a float score keeps exact. */
const TIES = 2 ** 13;

/**
 * A suggestion's weight: its rank, then a number from the entity's id. The suggester orders by
 * weight and leaves equal weights in index order, which the order of the export's lines and the
 * loader's concurrent bulk requests decide: two loads of one bundle suggested another ten for 5 %
 * of prefixes. Elasticsearch merges the options of several segments by their float score, so
 * the weight stays exact as a float. (A typo's score is its weight times a boost, which can
 * leave typo suggestions of one rank tied again.)
 */
export function suggestWeight(rank: number, id: string): number {
  return rank * TIES + (hash('sha1', id, 'buffer').readUInt16BE(0) % TIES);
}

/**
 * What the completion suggester (an in-memory FST: a prefix costs the same whatever the number
 * of entities) matches: the name and display name, and each from its second word on (a later
 * word that starts with the text). Weights rank a name that starts with the text above one
 * whose later word does, and shorter names first within each (the most specific completion,
 * as BM25's length norm did), then by id (`suggestWeight`). The doc's scope contexts come with each input.
 */
function suggestInputs(id: string, names: (string | undefined)[], environment: string, cycle: number, entityType: string): EntityDoc['suggest'] {
  const full = [...new Set(names.filter((n): n is string => n !== undefined))];
  const later = [...new Set(full.flatMap((name) => name.trim().split(/\s+/).map((_, i, parts) => parts.slice(i).join(' ')).slice(1)))];
  const scope = ([cycle, ANY_CYCLE] as const).flatMap((c) => [scopeContext(environment, c), scopeContext(environment, c, entityType)]);
  const shortest = (names: string[]) => Math.min(999, ...names.map((n) => n.length));
  return [
    ...(full.length ? [{ input: full, weight: suggestWeight(2000 - shortest(full), id), contexts: { scope } }] : []),
    ...(later.length ? [{ input: later, weight: suggestWeight(1000 - shortest(later), id), contexts: { scope } }] : []),
  ];
}

export const entities: IndexDescription<EntityDoc> = {
  name: 'entities',
  tombstones: true,
  files: ['entities'],
  mapping: mapping as MappingFile,
  requiredFields: ['id', 'slug', 'entityType', 'name', 'environment'],
  sort: [
    { field: 'label', order: 'asc' },
    { field: 'id', order: 'asc' },
  ],
  toDocument(row) {
    const id = required(row, 'id');
    const slug = str(row.slug) ?? id;
    const label = sortLabel(row.displayName, row.name, id);
    const entityType = str(row.entityType) ?? str(row.type) ?? 'unknown';
    const environment = str(row.environment) ?? 'unknown';
    const cycle = declaredCycle(row.cycle);
    return {
      id,
      slug,
      entityType,
      environment,
      cycle,
      typeId: /:type:([^:]+)$/.exec(id)?.[1],
      name: str(row.name),
      displayName: str(row.displayName),
      summary: str(row.summary),
      tokens: tokensOf(id, slug),
      label,
      placeholder: isPlaceholder(label),
      updatedAt: toInstant(row.updatedAt)?.text,
      suggest: suggestInputs(id, [str(row.name), str(row.displayName)], environment, cycle, entityType),
      row,
    };
  },
};
