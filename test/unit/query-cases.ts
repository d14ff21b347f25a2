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
    // Query power: ranges, lists, orders, counts, groups, autocomplete.
    ['events-range-asc-counted', 'events', b.toEventListBody!({ ...list, kind: ['a.b', 'c.d'], since: { at: '2026-06-01T00:00:00.000000000Z', onNanosecond: true }, until: { at: '2026-06-02T00:00:00.000000000Z', onNanosecond: false }, sort: 'occurredAt:asc' }, 6, { count: 100000 })],
    ['events-asc-search-after', 'events', b.toEventListBody!({ ...list, sort: 'occurredAt:asc' }, 6, { after: ['2026-06-28T10:56:59.000000000Z', 'event:x:0'] })],
    ['entities-updated-counted', 'entities', b.toEntityListBody!({ ...list, sort: 'updatedAt:desc' }, 6, { count: true })],
    ['entities-search-by-label', 'entities', b.toEntityListBody!({ ...list, q: 'zeta', sort: 'label:asc' }, 6)],
    ['entity-facts-confidence', 'facts', b.toEntityFactsBody!('character:stillness:1', 50, {}, { confidence: ['verified', 'probable'] })],
    ['groups-killmails-killer', 'killmails', b.toGroupsBody!(b.toKillmailListBody!({ ...list, npc: true }, 6).query, { name: 'killer', field: 'killerId', type: 'keyword', labels: 'entities' }, 200)],
    ['groups-entities-cycle', 'entities', b.toGroupsBody!(b.toEntityListBody!(list, 6).query, { name: 'cycle', field: 'cycle', type: 'integer', none: 0 }, 20)],
    ['histogram-events-week', 'events', b.toHistogramBody!(b.toEventListBody!({ ...list, scope: { kind: 'all' } }, 6).query, { name: 'occurredAt:week', field: 'occurredAt', interval: 'week' })],
    ['source-kinds', 'entity_sources', b.toSourceKindsBody!(['source:community:reports:stillness', 'source:x'])],
    ['autocomplete', 'entities', b.toAutocompleteBody!({ q: 'Vesna Ko', environment: 'stillness', scope: { kind: 'default' }, entityType: ['character'] }, 6)],
    // The freshness loop and autocomplete from the completion suggester.
    ['events-first-seen-after', 'events', b.toEventListBody!({ ...list, scope: { kind: 'all' }, sort: 'indexedAt:asc', sinceIndexed: { at: '2026-06-30T05:10:00.000000000Z', onNanosecond: true } }, 6, { after: ['2026-06-30T05:12:00.000000000Z', '2026-06-28T10:56:59.000000000Z', 'event:x:0'] })],
    ['entities-updated-since', 'entities', b.toEntityListBody!({ ...list, sort: 'updatedAt:desc', updatedSince: { at: '2026-06-01T00:00:00.000000000Z', onNanosecond: true } }, 6)],
    ['autocomplete-suggest', 'entities', b.toSuggestBody!({ q: 'Vesna Ko', environment: 'stillness', scope: { kind: 'default' }, entityType: ['character', 'tribe'] }, 6)],
    // Text that cannot be an id or slug: the suggester alone, and no exact tier.
    ['autocomplete-suggest-no-exact', 'entities', b.toSuggestBody!({ q: 'vesna ko', environment: 'stillness', scope: { kind: 'default' }, exact: false }, 6)],
    ['autocomplete-no-exact', 'entities', b.toAutocompleteBody!({ q: 'vesna ko', environment: 'stillness', scope: { kind: 'default' }, exact: false }, 6)],
    ['autocomplete-unseparated-ids', 'entities', b.unseparatedIds!()],
    ['killmails-asked-ids', 'killmails', b.toAskedIdsBody!({ filter: [{ terms: { id: ['killmail:stillness:1', 'killmail:stillness:2'] } }] }, ['id'], 2)],
    ['autocomplete-typos', 'entities', b.toTyposBody!({ q: 'Vesna Ko', environment: 'stillness', scope: { kind: 'default' }, entityType: ['character', 'tribe'] }, 6)],
    ['killmails-search', 'killmails', b.toKillmailListBody!({ ...list, q: 'Vesna', npc: false, scope: { kind: 'cycles', cycles: [5] } }, 6)],
  ];
}
