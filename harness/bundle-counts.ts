/**
 * Documents a loaded bundle must give, computed from the bundle files (never read back from
 * Elasticsearch): one per distinct row identity, with identities written here independently of
 * the loader's index descriptions.
 */
import { readManifest, readRows } from '../generator/read-bundle.ts';

/** The identity of a row of each JSONL collection. */
export const IDENTITY: Record<string, (row: any) => string> = {
  entities: (r) => r.id,
  sources: (r) => r.id,
  facts: (r) => `${r.entityId}:${r.key}:${r.sourceId}`,
  relations: (r) => r.id ?? `relation:${r.subjectEntityId}:${r.predicate}:${r.objectEntityId}:${r.sourceId}`,
  entity_sources: (r) => `${r.entityId}:${r.source.id}`,
  source_artefacts: (r) => r.id,
  current_entities: (r) => r.entity.id,
  current_relations: (r) => r.id ?? `relation:${r.subjectEntityId}:${r.predicate}:${r.objectEntityId}:${r.sourceId}`,
  killmails: (r) => r.id,
  events: (r) => r.id,
  chain_objects: (r) => r.id,
};

export async function distinctIds(dir: string, stem: string): Promise<{ rows: number; ids: Set<string> }> {
  const ids = new Set<string>();
  let rows = 0;
  for await (const { row } of readRows(dir, `${stem}.jsonl`)) {
    rows += 1;
    ids.add(IDENTITY[stem]!(row));
  }
  return { rows, ids };
}

/** Distinct identities per collection the bundle in `dir` lists (its expected document counts). */
export async function expectedCounts(dir: string): Promise<Record<string, number>> {
  const listed = new Set((await readManifest(dir)).files.map((f) => f.path));
  const counts: Record<string, number> = {};
  for (const stem of Object.keys(IDENTITY)) {
    if (listed.has(`${stem}.jsonl`)) counts[stem] = (await distinctIds(dir, stem)).ids.size;
  }
  return counts;
}
