import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { lineHash } from '../../loader/load-file.ts';
import { tokensOf, words } from '../../src/indices/description.ts';

/** The tokens as first written (a Set of each value and its words), the reference the loader's faster scan must match. */
function referenceTokens(...values: unknown[]): string[] {
  const tokens = new Set<string>();
  for (const value of values) {
    if (typeof value !== 'string' || value.trim() === '') continue;
    tokens.add(value);
    for (const part of words(value)) tokens.add(part);
  }
  return [...tokens].map((t) => t.slice(0, 512));
}

describe('the words of a text', () => {
  /** The split as first written: the character-code scan of ASCII text must give the same words. */
  const reference = (text: string) => text.split(/[^\p{L}\p{N}]+/u).filter(Boolean);

  it('are the runs of letters and digits, ASCII or not', () => {
    expect(words('event:CsP43M9f:0 gate.jump')).toEqual(['event', 'CsP43M9f', '0', 'gate', 'jump']);
    expect(words('--Vesna  Korr--')).toEqual(['Vesna', 'Korr']);
    expect(words('Ærø-ßtraße ٣٤ x²')).toEqual(reference('Ærø-ßtraße ٣٤ x²'));
    expect(words('')).toEqual([]);
  });

  it('match the Unicode split on every ASCII character and on texts drawn at random', () => {
    const ascii = Array.from({ length: 128 }, (_, c) => String.fromCharCode(c)).join('');
    expect(words(ascii)).toEqual(reference(ascii));
    const alphabet = ['a', 'Z', '7', ' ', ':', '-', '_', '.', '\t', 'é', '½', '€', '😀', '٣'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let n = 0; n < 2000; n++) {
      const text = Array.from({ length: next() % 24 }, () => alphabet[next() % (n % 2 ? alphabet.length : 9)]).join('');
      expect(words(text)).toEqual(reference(text));
    }
  });
});

describe('tokens of a row', () => {
  it('are each value and its words, once each, in first-seen order', () => {
    expect(tokensOf('character:stillness:2112456789', 'Vesna Korr', null, '', '  ', 42, 'korr Vesna')).toEqual([
      'character:stillness:2112456789', 'character', 'stillness', '2112456789', 'Vesna Korr', 'Vesna', 'Korr', 'korr Vesna', 'korr',
    ]);
  });

  it('match the reference past the point where the scan turns into a set, and for long and non-ASCII values', () => {
    const many = Array.from({ length: 300 }, (_, i) => `w${i % 90}`).join(' ');
    const cases: unknown[][] = [[many, 'w3 x w89 y'], [`${'x'.repeat(600)} y`, 'Ærø-ßtraße', 'Ærø'], [many, many], ['a:b:c', 'b c d', 'a']];
    for (const values of cases) expect(tokensOf(...values)).toEqual(referenceTokens(...values));
  });

  it('stay linear on a name of thousands of words', () => {
    const huge = Array.from({ length: 50_000 }, (_, i) => `w${i}`).join(' ');
    expect(tokensOf(huge)).toHaveLength(50_001);
  });
});

describe('the hash of a line', () => {
  it('is the sha1 of its UTF-8 text, so rows loaded before it hashed bytes still read as unchanged', () => {
    const text = '{"id":"entity:Ærø","name":"Vesna Korr ☄"}';
    expect(lineHash(Buffer.from(text))).toBe(createHash('sha1').update(text, 'utf8').digest('base64url').slice(0, 11));
  });
});
