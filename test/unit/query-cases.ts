/** The query shapes checked against fixtures: one per builder and option that changes the body. */
import type { SearchBody } from '../../src/query/list.ts';

type Builders = Record<string, (...args: any[]) => SearchBody>;

export function queryCases(b: Builders): [string, string, SearchBody][] {
  const list = { environment: 'stillness', scope: { kind: 'default' }, limit: 50 };
  return [
    ['entities-default', 'entities', b.toEntityListBody!(list, 6)],
    ['entities-typed-all-cycles', 'entities', b.toEntityListBody!({ ...list, scope: { kind: 'all' }, entityType: ['character'], profile: 'known' }, 6)],
    ['entities-search-after', 'entities', b.toEntityListBody!({ ...list, q: 'Zeta drone', scope: { kind: 'cycles', cycles: [5, 6] } }, 6, { after: [12.5, 'character:stillness:1'] })],
    ['entity-lookup', 'entities', b.toEntityLookupBody!('character-1-stillness', 'character')],
    ['static-types', 'entities', b.toEntityListBody!({ ...list, staticTypes: true, q: 'drone' }, 6)],
    ['static-type-lookup', 'entities', b.toStaticTypeLookupBody!('94411', 'stillness')],
    ['current-characters', 'current_entities', b.toCurrentEntityListBody!('characters', { ...list, scope: { kind: 'current' } }, 6)],
    ['current-systems-search', 'current_entities', b.toCurrentEntityListBody!('systems', { ...list, q: 'okr' }, 6)],
    ['current-ownership', 'current_relations', b.toCurrentRelationListBody!('ownership', list, 6, { after: ['a | b', 'relation:x'] })],
    ['current-route-edges-search', 'current_relations', b.toCurrentRelationListBody!('route-edges', { ...list, q: 'gate' }, 6)],
    ['entity-facts', 'facts', b.toEntityFactsBody!('character:stillness:1', 50)],
    ['entity-relations', 'relations', b.toEntityRelationsBody!('character:stillness:1', 20, { after: ['belongs_to', 'tribe:stillness:9', 's', 'relation:x'] })],
    ['entity-sources', 'entity_sources', b.toEntitySourcesBody!('character:stillness:1', 50)],
    ['sources', 'sources', b.toSourceListBody!({ environment: 'stillness', scope: { kind: 'default' }, limit: 50 }, 6)],
    ['sources-kind-search', 'sources', b.toSourceListBody!({ environment: 'stillness', scope: { kind: 'cycles', cycles: [6] }, limit: 10, kind: ['onchain'], q: 'chain graphql' }, 6, { after: ['onchain', 'source:x'] })],
    ['events-filtered', 'events', b.toEventListBody!({ ...list, kind: ['killmail.created'], module: ['killmail'], packageId: ['0x1'], transactionDigest: ['T1'], sourceId: ['s'] }, 6)],
    ['events-search-after', 'events', b.toEventListBody!({ ...list, q: 'character.created', scope: { kind: 'all' } }, 6, { after: ['2026-06-28T10:56:59.000000000Z', 'event:x:0'] })],
    ['killmails-filtered', 'killmails', b.toKillmailListBody!({ ...list, system: ['system:stillness:1'], victim: ['v'], killer: ['94411'], reporter: ['r'], npc: true }, 6)],
    ['killmails-search', 'killmails', b.toKillmailListBody!({ ...list, q: 'Vesna', npc: false, scope: { kind: 'cycles', cycles: [5] } }, 6)],
  ];
}
