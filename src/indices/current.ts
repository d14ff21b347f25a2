/**
 * Current indices: the registry's current view of entities (`current_entities.jsonl`) and
 * of ownership and route edges (`current_relations.jsonl`), each row tagged with the
 * `/v1/current/{collection}` it belongs to. Rows of other types or predicates are kept
 * (nothing is lost) but belong to no collection.
 */
import currentEntitiesMapping from '../../mappings/current_entities.json' with { type: 'json' };
import currentRelationsMapping from '../../mappings/current_relations.json' with { type: 'json' };
import { currentCollectionOfPredicate, currentCollectionOfType } from './collections.ts';
import { UNCYCLED, declaredCycle } from './cycle.ts';
import { type IndexDescription, type MappingFile, type Row, RowError, tokensOf, isPlaceholder, object, required, sortLabel, str } from './description.ts';
import { toInstant } from '../time/instant.ts';
import { relationId } from './provenance.ts';

/** Fact keys that prove a current character was seen on chain in scope. */
const EVIDENCE_KEYS = ['source_event_kind', 'source_event_id', 'transaction_digest'];

export interface CurrentEntityDoc {
  /** The entity id. */
  id: string;
  slug?: string;
  collection?: string;
  entityType: string;
  environment: string;
  cycle: number;
  name?: string;
  displayName?: string;
  summary?: string;
  /** Profile name and tag, tribe, owner and system names: what else a search should find. */
  profileText?: string;
  tokens: string[];
  label: string;
  /** The label is a registry placeholder, not a known name (`profile=placeholder`). */
  placeholder: boolean;
  /** Characters only count as current with chain evidence among their facts. */
  hasEvidence: boolean;
  updatedAt?: string;
  row: Row;
}

/** Fact keys of a current row: a map, or the legacy array of `{key, value}`. */
function factKeys(facts: unknown): Set<string> {
  if (Array.isArray(facts)) return new Set(facts.map((f) => str(object(f)?.key)).filter((k) => k !== undefined));
  return new Set(Object.keys(object(facts) ?? {}));
}

export const currentEntities: IndexDescription<CurrentEntityDoc> = {
  name: 'current_entities',
  files: ['current_entities'],
  mapping: currentEntitiesMapping as MappingFile,
  requiredFields: [],
  sort: [
    { field: 'label', order: 'asc' },
    { field: 'id', order: 'asc' },
  ],
  toDocument(row) {
    const entity = object(row.entity);
    if (entity === undefined) throw new RowError('missing required field "entity"');
    const id = required(entity, 'id');
    const entityType = str(entity.entityType) ?? str(entity.type) ?? 'unknown';
    const derived = object(row.derived);
    const profile = object(derived?.profile);
    const keys = factKeys(row.facts);
    const related = ['tribe', 'owner', 'system'].map((k) => str(object(derived?.[k])?.displayName));
    const profileText = [str(profile?.metadataName), str(profile?.tag), ...related].filter(Boolean).join(' ');
    const label = sortLabel(entity.displayName, entity.name, id);
    return {
      id,
      slug: str(entity.slug),
      collection: currentCollectionOfType(entityType),
      entityType,
      environment: str(entity.environment) ?? 'unknown',
      cycle: declaredCycle(entity.cycle),
      name: str(entity.name),
      displayName: str(entity.displayName),
      summary: str(entity.summary),
      profileText: profileText || undefined,
      tokens: tokensOf(id, entity.slug),
      label,
      placeholder: isPlaceholder(label),
      hasEvidence: EVIDENCE_KEYS.some((k) => keys.has(k)),
      updatedAt: toInstant(entity.updatedAt)?.text,
      row,
    };
  },
};

export interface CurrentRelationDoc {
  id: string;
  collection?: string;
  predicate: string;
  subjectEntityId: string;
  objectEntityId: string;
  sourceId?: string;
  environment: string;
  /** Current relations carry no cycle in the export: uncycled. */
  cycle: number;
  /** `<subject label> | <object label>`, the reference's order. */
  label: string;
  searchText: string;
  tokens: string[];
  createdAt?: string;
  row: Row;
}

export const currentRelations: IndexDescription<CurrentRelationDoc> = {
  name: 'current_relations',
  files: ['current_relations'],
  mapping: currentRelationsMapping as MappingFile,
  requiredFields: [],
  sort: [
    { field: 'label', order: 'asc' },
    { field: 'id', order: 'asc' },
  ],
  toDocument(row) {
    const subject = required(row, 'subjectEntityId');
    const object_ = required(row, 'objectEntityId');
    const predicate = required(row, 'predicate');
    const subjectLabel = sortLabel(row.subjectDisplayName, subject);
    const objectLabel = sortLabel(row.objectDisplayName, object_);
    return {
      id: relationId(row),
      collection: currentCollectionOfPredicate(predicate),
      predicate,
      subjectEntityId: subject,
      objectEntityId: object_,
      sourceId: str(row.sourceId),
      environment: str(row.environment) ?? 'unknown',
      cycle: UNCYCLED,
      label: `${subjectLabel} | ${objectLabel}`.slice(0, 256),
      searchText: [subjectLabel, objectLabel].join(' '),
      tokens: tokensOf(subject, object_),
      createdAt: toInstant(row.createdAt)?.text,
      row,
    };
  },
};
