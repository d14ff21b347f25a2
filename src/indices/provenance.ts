/**
 * Provenance indices: facts, relations, entity_sources, sources and source_artefacts.
 *
 * Facts and relations have no id in the export: their identity is their key (section 5 of
 * the export format), so a repeated key replaces the earlier row (last row wins).
 */
import artefactsMapping from '../../mappings/source_artefacts.json' with { type: 'json' };
import entitySourcesMapping from '../../mappings/entity_sources.json' with { type: 'json' };
import factsMapping from '../../mappings/facts.json' with { type: 'json' };
import relationsMapping from '../../mappings/relations.json' with { type: 'json' };
import sourcesMapping from '../../mappings/sources.json' with { type: 'json' };
import { UNCYCLED, declaredCycle } from './cycle.ts';
import { type IndexDescription, type MappingFile, type Row, RowError, required, str, tokensOf } from './description.ts';
import { toInstant } from '../time/instant.ts';

type Rowed = { row: Row };

export interface FactDoc extends Rowed {
  /** `<entityId>:<key>:<sourceId>`, the API's key for a fact. */
  id: string;
  entityId: string;
  key: string;
  /** The value of an `*_address` fact (`character_address`), lowercased: what `/v1/resolve` finds an entity by. */
  address?: string;
  sourceId: string;
  confidence?: string;
  reviewStatus?: string;
  environment: string;
  cycle: number;
}

/** An address as facts keep it (`address`, lowercased) and as `/v1/resolve` compares a pasted value with it. */
export const ADDRESS = /^0x[0-9a-f]{1,64}$/i;

/** An `*_address` fact's value, lowercased, when it is one (`0x` and hex digits). */
function addressOf(key: string, value: unknown): string | undefined {
  return key.endsWith('_address') && typeof value === 'string' && ADDRESS.test(value) ? value.toLowerCase() : undefined;
}

export const facts: IndexDescription<FactDoc> = {
  name: 'facts',
  files: ['facts'],
  mapping: factsMapping as MappingFile,
  requiredFields: [],
  sort: [
    { field: 'key', order: 'asc' },
    { field: 'sourceId', order: 'asc' },
    { field: 'id', order: 'asc' },
  ],
  toDocument(row) {
    const entityId = str(row.entityId) ?? required(row, 'entity_id');
    const key = required(row, 'key');
    const sourceId = str(row.sourceId) ?? '';
    return {
      id: `${entityId}:${key}:${sourceId}`,
      entityId,
      key,
      address: addressOf(key, row.value),
      sourceId,
      confidence: str(row.confidence),
      reviewStatus: str(row.reviewStatus),
      environment: str(row.environment) ?? 'unknown',
      cycle: declaredCycle(row.cycle),
      row,
    };
  },
};

export interface RelationDoc extends Rowed {
  /** `relation:<subject>:<predicate>:<object>:<sourceId>` unless the row has an id. */
  id: string;
  subjectEntityId: string;
  predicate: string;
  objectEntityId: string;
  sourceId: string;
  confidence?: string;
  environment: string;
  cycle: number;
}

/** The id the reference API synthesises for relation rows, which carry none. */
export function relationId(row: Row): string {
  const subject = required(row, 'subjectEntityId');
  const predicate = required(row, 'predicate');
  const object = required(row, 'objectEntityId');
  return str(row.id) ?? `relation:${subject}:${predicate}:${object}:${str(row.sourceId) ?? ''}`;
}

export const relations: IndexDescription<RelationDoc> = {
  name: 'relations',
  files: ['relations'],
  mapping: relationsMapping as MappingFile,
  requiredFields: [],
  sort: [
    { field: 'predicate', order: 'asc' },
    { field: 'objectEntityId', order: 'asc' },
    { field: 'sourceId', order: 'asc' },
    { field: 'id', order: 'asc' },
  ],
  toDocument(row) {
    return {
      id: relationId(row),
      subjectEntityId: required(row, 'subjectEntityId'),
      predicate: required(row, 'predicate'),
      objectEntityId: required(row, 'objectEntityId'),
      sourceId: str(row.sourceId) ?? '',
      confidence: str(row.confidence),
      environment: str(row.environment) ?? 'unknown',
      // Relations carry no cycle in the export: they are uncycled.
      cycle: UNCYCLED,
      row,
    };
  },
};

export interface EntitySourceDoc extends Rowed {
  /** `<entityId>:<source id>`. */
  id: string;
  entityId: string;
  sourceId: string;
  kind?: string;
  environment?: string;
}

export const entitySources: IndexDescription<EntitySourceDoc> = {
  name: 'entity_sources',
  files: ['entity_sources'],
  mapping: entitySourcesMapping as MappingFile,
  requiredFields: [],
  sort: [
    { field: 'kind', order: 'asc' },
    { field: 'sourceId', order: 'asc' },
    { field: 'id', order: 'asc' },
  ],
  toDocument(row) {
    const entityId = str(row.entityId) ?? required(row, 'entity_id');
    // Legacy flat rows are the source object itself, with the entity id beside its fields.
    const source = (row.source !== null && typeof row.source === 'object' ? row.source : row) as Row;
    const sourceId = str(source.id) ?? str(row.sourceId);
    if (sourceId === undefined) throw new RowError('missing required field "source.id"');
    return {
      id: `${entityId}:${sourceId}`,
      entityId,
      sourceId,
      kind: str(source.sourceKind) ?? str(source.kind),
      environment: str(source.environment),
      row,
    };
  },
};

export interface SourceDoc extends Rowed {
  id: string;
  kind: string;
  /** Words of the id, kind, title and locator: the `q` filter. */
  tokens: string[];
  environment?: string;
  cycle: number;
  createdAt?: string;
}

export const sources: IndexDescription<SourceDoc> = {
  name: 'sources',
  files: ['sources'],
  mapping: sourcesMapping as MappingFile,
  requiredFields: ['id', 'kind', 'title', 'locator'],
  sort: [
    { field: 'kind', order: 'asc' },
    { field: 'id', order: 'asc' },
  ],
  toDocument(row) {
    return {
      id: required(row, 'id'),
      kind: str(row.sourceKind) ?? str(row.kind) ?? '',
      tokens: tokensOf(row.id, row.sourceKind, row.kind, row.title, row.locator),
      environment: str(row.environment),
      cycle: declaredCycle(row.cycle),
      createdAt: toInstant(row.createdAt)?.text,
      row,
    };
  },
};

export interface ArtefactDoc extends Rowed {
  id: string;
  sourceId?: string;
  sourceKind?: string;
  kind?: string;
  sha256?: string;
  environment?: string;
  cycle: number;
  createdAt?: string;
}

export const sourceArtefacts: IndexDescription<ArtefactDoc> = {
  name: 'source_artefacts',
  files: ['source_artefacts'],
  mapping: artefactsMapping as MappingFile,
  requiredFields: [],
  sort: [
    { field: 'createdAt', order: 'desc' },
    { field: 'id', order: 'desc' },
  ],
  toDocument(row) {
    return {
      id: required(row, 'id'),
      sourceId: str(row.sourceId),
      sourceKind: str(row.sourceKind),
      kind: str(row.artefactKind) ?? str(row.kind),
      sha256: str(row.sha256),
      environment: str(row.environment),
      cycle: declaredCycle(row.cycle),
      createdAt: toInstant(row.extractedAt ?? row.createdAt)?.text,
      row,
    };
  },
};
