/** Completion weights (src/indices/entities.ts `suggestWeight`): the rank first, then a number from the id that sets same-ranked names apart the same way in every load. */
import { describe, expect, it } from 'vitest';
import { entities, suggestWeight } from '../../src/indices/entities.ts';

const ids = Array.from({ length: 2000 }, (_, i) => `character:stillness:${2112000000 + i * 7919}`);

describe('suggestWeight', () => {
  it('orders by rank whatever the ids', () => {
    const lowest = (rank: number) => Math.min(...ids.map((id) => suggestWeight(rank, id)));
    const highest = (rank: number) => Math.max(...ids.map((id) => suggestWeight(rank, id)));
    for (const rank of [1, 2, 999, 1000, 1001, 1999, 2000]) expect(lowest(rank), `rank ${rank}`).toBeGreaterThan(highest(rank - 1));
  });

  it('gives an id the same weight every time, and sets most ids of a rank apart', () => {
    expect(suggestWeight(1500, ids[0]!)).toBe(suggestWeight(1500, ids[0]!));
    const distinct = new Set(ids.map((id) => suggestWeight(1500, id)));
    // 2,000 ids over 8,192 numbers: about 1,790 distinct expected; all of them if none collided.
    expect(distinct.size).toBeGreaterThan(1700);
  });

  it('stays an integer a float score keeps exact, for every rank the entities use', () => {
    for (const rank of [0, 1, 1000, 2000]) {
      for (const id of ids) {
        const weight = suggestWeight(rank, id);
        expect(Number.isInteger(weight)).toBe(true);
        expect(Math.fround(weight)).toBe(weight);
        expect(weight).toBeLessThan(2 ** 24);
      }
    }
  });

  it('ranks a name that starts with the text above a later word of it, in the documents the loader writes', () => {
    const doc = entities.toDocument({ id: 'character:stillness:1', environment: 'stillness', cycle: 6, name: 'Galen Nyx', entityType: 'character' }, {} as never);
    const [full, later] = doc.suggest;
    expect(full!.input).toEqual(['Galen Nyx']);
    expect(later!.input).toEqual(['Nyx']);
    expect(full!.weight).toBe(suggestWeight(2000 - 'Galen Nyx'.length, 'character:stillness:1'));
    expect(later!.weight).toBe(suggestWeight(1000 - 'Nyx'.length, 'character:stillness:1'));
    expect(full!.weight).toBeGreaterThan(later!.weight);
  });
});
