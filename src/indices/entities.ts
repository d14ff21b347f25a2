/** The `entities` index: one document per entity id (last row wins), sorted by label then id. */
import mapping from '../../mappings/entities.json' with { type: 'json' };
import { declaredCycle } from './cycle.ts';
import { type IndexDescription, type MappingFile, tokensOf, isPlaceholder, required, sortLabel, str } from './description.ts';
import { toInstant } from './instant.ts';

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
  row: Record<string, unknown>;
}

export const entities: IndexDescription<EntityDoc> = {
  name: 'entities',
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
    return {
      id,
      slug,
      entityType: str(row.entityType) ?? str(row.type) ?? 'unknown',
      environment: str(row.environment) ?? 'unknown',
      cycle: declaredCycle(row.cycle),
      typeId: /:type:([^:]+)$/.exec(id)?.[1],
      name: str(row.name),
      displayName: str(row.displayName),
      summary: str(row.summary),
      tokens: tokensOf(id, slug),
      label,
      placeholder: isPlaceholder(label),
      updatedAt: toInstant(row.updatedAt)?.text,
      row,
    };
  },
};
