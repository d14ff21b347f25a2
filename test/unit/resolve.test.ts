/**
 * The resolve body and its answer (src/query/resolve.ts): one clause per index bound by
 * `_index`, an address compared lowercased and only where it is one, and hits answered once per
 * record with the field that matched.
 */
import { describe, expect, it } from 'vitest';
import { LOOKUPS, RESOLVE_INDICES, resolvedOf, toResolveBody } from '../../src/query/resolve.ts';

const nameOf = (index: string) => `p-${index}-g1`;
type Clause = { bool: { filter: { term: { _index: string } }[]; should: { term: Record<string, string> }[] } };
const clauses = (value: string) => (toResolveBody(value, nameOf).query as { bool: { should: Clause[] } }).bool.should;
const fieldsOf = (value: string, index: string) => clauses(value).find((c) => c.bool.filter[0]!.term._index === nameOf(index))?.bool.should.map((t) => Object.entries(t.term)[0]);

describe('toResolveBody', () => {
  it('asks every index that holds an identifier, each by its own fields', () => {
    expect(new Set(clauses('character:stillness:1').map((c) => c.bool.filter[0]!.term._index))).toEqual(new Set(RESOLVE_INDICES.filter((i) => i !== 'facts').map(nameOf)));
    expect(fieldsOf('abc', 'events')).toEqual([['id', 'abc'], ['transactionDigest', 'abc']]);
    expect(fieldsOf('abc', 'source_artefacts')).toEqual([['id', 'abc'], ['sha256', 'abc']]);
  });

  it('compares an address lowercased, and asks facts only for a value that is one', () => {
    expect(fieldsOf('0xABcd', 'facts')).toEqual([['address', '0xabcd']]);
    expect(fieldsOf('0xABcd', 'chain_objects')).toEqual([['id', '0xABcd'], ['objectId', '0xABcd']]);
    expect(fieldsOf('0xnothex', 'facts')).toBeUndefined();
  });

  it('reads ids from doc values, never rows', () => {
    const body = toResolveBody('x', nameOf);
    expect(body._source).toBe(false);
    expect(body.docvalue_fields).toEqual(expect.arrayContaining(['id', 'entityId', 'slug', 'address', 'transactionDigest', 'sha256', 'objectId']));
  });
});

describe('resolvedOf', () => {
  it('answers an entity its facts name twice once, in LOOKUPS order, with what matched and its href', () => {
    const fact = (source: string) => ({ index: 'facts' as const, fields: { id: [`character:s:1:character_address:${source}`], entityId: ['character:s:1'], address: ['0xab'] } });
    const object = { index: 'chain_objects' as const, fields: { id: ['object:0xab:7'], objectId: ['0xAB'] } };
    expect(resolvedOf('0xAB', [object, fact('a'), fact('b')])).toEqual([
      { type: 'entity', id: 'character:s:1', href: '/v1/entities/character%3As%3A1', matched: 'address' },
      { type: 'chain_object', id: 'object:0xab:7', href: '/v1/chain-objects/object%3A0xab%3A7', matched: 'objectId' },
    ]);
    const event = { index: 'events' as const, fields: { id: ['event:T:0'], transactionDigest: ['T'] } };
    expect(resolvedOf('T', [event])).toEqual([{ type: 'event', id: 'event:T:0', href: '/v1/events/event%3AT%3A0', matched: 'transactionDigest' }]);
    expect(resolvedOf('event:T:0', [event])[0]!.matched).toBe('id');
  });

  it('has a route for every type it answers', () => {
    for (const lookup of LOOKUPS) expect(lookup.route).toMatch(/^\/v1\/[a-z-]+\/$/);
  });
});
