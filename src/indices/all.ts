/**
 * Every row-fed index, in load order. Relations load before killmails because a sourced
 * `killer` relation to an enemy is one of the two proofs of an NPC kill.
 */
import { currentEntities, currentRelations } from './current.ts';
import type { IndexDescription } from './description.ts';
import { entities } from './entities.ts';
import { entitySources, facts, relations, sourceArtefacts, sources } from './provenance.ts';
import { chainObjects, events, killmails } from './timeline.ts';

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
  events,
  chainObjects,
] as const satisfies readonly IndexDescription<any>[];

export type IndexName = (typeof INDICES)[number]['name'];

/** The four operational documents of a bundle: key in the generation document → file names (project spelling first). */
export const OPS_DOCUMENTS = {
  freshness: ['ops_freshness.json'],
  cursors: ['ops_cursors.json'],
  chainCoverage: ['ops_chain_coverage.json', 'ops_sui_coverage.json'],
  sourceGaps: ['ops_source_gaps.json'],
} as const;

export type OpsDocumentName = keyof typeof OPS_DOCUMENTS;
