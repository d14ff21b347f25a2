/**
 * Rows that left, and rows that changed: what a mirror that follows `since_indexed`
 * needs beyond the rows first seen since. For each index that keeps them (`tombstones` in its
 * description: entities, events, killmails) a **changes index** beside the generations holds one
 * document per id whose row a load removed or changed, written by that load:
 *
 * - a row that left: a **tombstone**, its row `{id, removed: true, removedAt}`;
 * - a row that changed: its new row again.
 *
 * Either document carries the row's indexed fields (so a walk's filters and scope apply to it)
 * and, as `indexedAt`, the first-seen instant of the load that made the change: a walk with
 * `include=removed` reads the generation's index and the changes index in one search, in one
 * order, and meets each change where it became visible. A later change of the same id replaces
 * the document. The changes index outlives generations (TOMBSTONE_DAYS prunes it, not
 * KEEP_GENERATIONS); its name carries a hash of its mapping, so a new mapping starts a new one.
 */
import { createHash } from 'node:crypto';
import { INDICES } from './all.ts';
import { FIRST_SEEN, type MappingFile, NANOS_FORMAT, ROW, ROW_HASH } from './description.ts';

/** The changes index of one index, for its mapping. */
export function changesIndexName(prefix: string, name: string, mapping: MappingFile): string {
  const hash = createHash('sha256').update(JSON.stringify(changesMapping(mapping))).digest('hex').slice(0, 8);
  return `${prefix}-changes-${name}-${hash}`;
}

/** The changes indices of a prefix's indices that keep them, for the mappings of this code. */
export function changesIndices(prefix: string): string[] {
  return INDICES.filter((d) => d.tombstones).map((d) => changesIndexName(prefix, d.name, d.mapping));
}

/** Every changes index of a prefix (tests and benchmarks delete them with their generations). */
export const changesIndexPattern = (prefix: string) => `${prefix}-changes-*`;

/** The index's mapping, with `indexedAt` where it has none (entities): the instant of each change. */
export function changesMapping(mapping: MappingFile): MappingFile {
  const properties = mapping.mappings.properties;
  if (FIRST_SEEN in properties) return mapping;
  return { ...mapping, mappings: { ...mapping.mappings, properties: { ...properties, [FIRST_SEEN]: { type: 'date_nanos' } } } };
}

const WITH_DOC_VALUES = new Set(['keyword', 'integer', 'long', 'short', 'boolean', 'date', 'date_nanos']);

/** The indexed fields a change copies from the document it stands for (doc values: every document keeps them). */
export function copiedFields(mapping: MappingFile): (string | { field: string; format: string })[] {
  return Object.entries(mapping.mappings.properties).flatMap(([field, spec]) => {
    const type = (spec as { type?: string; doc_values?: boolean }).type ?? '';
    if ([ROW, ROW_HASH, FIRST_SEEN, 'original'].includes(field) || !WITH_DOC_VALUES.has(type) || (spec as { doc_values?: boolean }).doc_values === false) return [];
    return [type === 'date_nanos' ? { field, format: NANOS_FORMAT } : field];
  });
}

/** The row a tombstone answers. */
export function tombstoneRow(id: string, removedAt: string): { id: string; removed: true; removedAt: string } {
  return { id, removed: true, removedAt };
}
