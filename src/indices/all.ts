/**
 * Every index, in load order: those fed by a bundle file, and battle_kills derived from the
 * killmails (battle-kills.ts). Relations load before killmails because a sourced
 * `killer` relation to an enemy is one of the two proofs of an NPC kill.
 */
import { createHash } from 'node:crypto';
import type { CycleStart } from '../config.ts';
import { currentEntities, currentRelations } from './current.ts';
import type { IndexDescription } from './description.ts';
import { entities } from './entities.ts';
import { entitySources, facts, relations, sourceArtefacts, sources } from './provenance.ts';
import { chainObjects, events, killmails } from './timeline.ts';
import { battleKills } from './battle-kills.ts';

export const INDICES = [
  entities,
  sources,
  facts,
  relations,
  entitySources,
  sourceArtefacts,
  currentEntities,
  currentRelations,
  killmails,
  battleKills,
  events,
  chainObjects,
] as const satisfies readonly IndexDescription<any>[];

export type IndexName = (typeof INDICES)[number]['name'];

/** The indices a bundle file feeds, in load order: what `/v1/changes` compares (battle_kills is derived from killmails). */
export const CHANGE_COLLECTIONS = INDICES.filter((d) => d.derive === undefined).map((d) => d.name) as IndexName[];

/** The four operational documents of a bundle: key in the generation document → file names (project spelling first). */
export const OPS_DOCUMENTS = {
  freshness: ['ops_freshness.json'],
  cursors: ['ops_cursors.json'],
  chainCoverage: ['ops_chain_coverage.json', 'ops_sui_coverage.json'],
  sourceGaps: ['ops_source_gaps.json'],
} as const;

export type OpsDocumentName = keyof typeof OPS_DOCUMENTS;

/** Bump when a `toDocument` changes what it writes without a mapping change. */
const DOCUMENT_VERSION = 5;

/**
 * A fingerprint of everything that shapes the documents besides the bundle: mappings, the
 * document version and the cycle settings. Loading a bundle that is already live is a no-op
 * only when this is unchanged too, so an upgrade or a new CYCLE_STARTS reindexes by itself.
 */
export function indexSchema(settings: { cycleStarts: readonly CycleStart[]; currentCycle?: number }, metaMapping: unknown): string {
  const shape = {
    version: DOCUMENT_VERSION,
    mappings: INDICES.map((d) => [d.name, d.mapping]),
    meta: metaMapping,
    cycleStarts: settings.cycleStarts.map((c) => [c.cycle, c.startsAtMs]),
    currentCycle: settings.currentCycle ?? null,
  };
  return createHash('sha256').update(JSON.stringify(shape)).digest('hex').slice(0, 16);
}
