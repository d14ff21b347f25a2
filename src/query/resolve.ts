/**
 * `GET /v1/resolve/{value}`: what any identifier is — what a block-explorer user pastes. One
 * search over every index that holds an identifier, each clause bound to its index by
 * `_index`, so that one round trip answers whichever it is: an entity id or slug, a
 * character's address (`0x…`, from its `*_address` facts), a killmail, an event id or a
 * transaction digest (its events), a source, an artefact id or sha256, a chain object id or
 * object id. Every match is answered as `{type, id, href, matched}`.
 */
import type { estypes } from '@elastic/elasticsearch';
import type { IndexName } from '../indices/all.ts';
import { ADDRESS } from '../indices/provenance.ts';
import type { SearchBody } from './list.ts';

export type ResolvedType = 'entity' | 'killmail' | 'event' | 'source' | 'artefact' | 'chain_object';

export interface Resolved {
  type: ResolvedType;
  id: string;
  /** The record's route. */
  href: string;
  /** The field the value was found in (`id`, `slug`, `transactionDigest`, `address`, …). */
  matched: string;
}

interface Lookup {
  index: IndexName;
  type: ResolvedType;
  /** Keyword fields of the index that may hold the value, in the order a match is named by. */
  fields: readonly string[];
  /** The field that holds the id of the record answered (a fact answers its entity). */
  idField: 'id' | 'entityId';
  route: string;
}

/** Where each kind of identifier lives. */
export const LOOKUPS: readonly Lookup[] = [
  { index: 'entities', type: 'entity', fields: ['id', 'slug'], idField: 'id', route: '/v1/entities/' },
  { index: 'facts', type: 'entity', fields: ['address'], idField: 'entityId', route: '/v1/entities/' },
  { index: 'killmails', type: 'killmail', fields: ['id'], idField: 'id', route: '/v1/killmails/' },
  { index: 'events', type: 'event', fields: ['id', 'transactionDigest'], idField: 'id', route: '/v1/events/' },
  { index: 'sources', type: 'source', fields: ['id'], idField: 'id', route: '/v1/sources/' },
  { index: 'source_artefacts', type: 'artefact', fields: ['id', 'sha256'], idField: 'id', route: '/v1/artefacts/' },
  { index: 'chain_objects', type: 'chain_object', fields: ['id', 'objectId'], idField: 'id', route: '/v1/chain-objects/' },
];

/** How many records one value may resolve to: a transaction's events are few; a value matching more says little more. */
export const MAX_RESOLVED = 100;

/** The value as each field keeps it: addresses lowercased, the rest as exported. */
function valueFor(field: string, value: string): string | undefined {
  if (field !== 'address') return value;
  return ADDRESS.test(value) ? value.toLowerCase() : undefined;
}

/** One search over the concrete indices `nameOf` gives: a clause per index, its id fields returned as doc values. */
export function toResolveBody(value: string, nameOf: (index: IndexName) => string): SearchBody {
  const should: estypes.QueryDslQueryContainer[] = [];
  for (const lookup of LOOKUPS) {
    const terms = lookup.fields.flatMap((field) => {
      const kept = valueFor(field, value);
      return kept === undefined ? [] : [{ term: { [field]: kept } }];
    });
    if (terms.length === 0) continue;
    should.push({ bool: { filter: [{ term: { _index: nameOf(lookup.index) } }], should: terms, minimum_should_match: 1 } });
  }
  return {
    size: MAX_RESOLVED,
    _source: false,
    docvalue_fields: [...new Set(LOOKUPS.flatMap((l) => [l.idField, ...l.fields]))],
    query: { bool: { should, minimum_should_match: 1 } },
    sort: [{ id: 'asc' }],
    track_total_hits: false,
  };
}

export interface ResolveHit {
  index: IndexName;
  fields: Record<string, readonly unknown[] | undefined>;
}

/** The hits as records, one per type and id (an entity found by id and by address once), in `LOOKUPS` order. */
export function resolvedOf(value: string, hits: readonly ResolveHit[]): Resolved[] {
  const seen = new Set<string>();
  const answer: Resolved[] = [];
  for (const lookup of LOOKUPS) {
    for (const hit of hits) {
      if (hit.index !== lookup.index) continue;
      const id = hit.fields[lookup.idField]?.[0];
      if (typeof id !== 'string') continue;
      const key = `${lookup.type} ${id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const matched = lookup.fields.find((field) => hit.fields[field]?.includes(valueFor(field, value))) ?? lookup.fields[0]!;
      answer.push({ type: lookup.type, id, href: `${lookup.route}${encodeURIComponent(id)}`, matched });
    }
  }
  return answer;
}

/** The indices one resolve searches. */
export const RESOLVE_INDICES: readonly IndexName[] = [...new Set(LOOKUPS.map((l) => l.index))];
