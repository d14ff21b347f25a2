/** The pure parts of list downloads (src/routes/download.ts): RFC 4180 fields and file names. */
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { csvField, csvLine, fileName } from '../../src/routes/download.ts';

describe('CSV fields (RFC 4180)', () => {
  it('quotes exactly the fields that need it, doubling quotes; a real parser reads every value back', () => {
    const values = ['plain', 'a,b', 'say "hi"', 'two\r\nlines', 'lf\nonly', 'Ünal > Ürün 星野', ' spaced ', ''];
    expect(values.map(csvField)).toEqual(['plain', '"a,b"', '"say ""hi"""', '"two\r\nlines"', '"lf\nonly"', 'Ünal > Ürün 星野', ' spaced ', '']);
    expect(parse(csvLine(values) + csvLine(values))).toEqual([values, values]);
  });

  it('writes numbers and booleans as text, nested values as JSON text, absent values empty', () => {
    expect(csvLine([1.5, false, { a: [1, 'x,y'] }, null, undefined])).toBe('1.5,false,"{""a"":[1,""x,y""]}",,\r\n');
    const [record] = parse(csvLine([1, true, { a: [1, 'x,y'] }])) as string[][];
    const nested = record![2];
    expect(JSON.parse(nested!)).toEqual({ a: [1, 'x,y'] });
  });
});

describe('CSV fields a spreadsheet would run', () => {
  it("leads text that begins with = + - @ TAB or CR with ', and leaves numbers and other text as they are", () => {
    const formulas = ['=HYPERLINK("http://x","y")', '+1+1', '-2+3', '@SUM(A1)', '\tlead', '\rlead'];
    const read = parse(csvLine(formulas), { relaxQuotes: false }) as string[][];
    expect(read[0]).toEqual(formulas.map((text) => `'${text}`));
    expect(csvLine([-2, 'a=b', 'x-y', ' =spaced', "'quoted"])).toBe("-2,a=b,x-y, =spaced,'quoted\r\n");
  });
});

describe('download file names', () => {
  it('names the route and the filters asked for, in characters every system takes', () => {
    expect(fileName('/v1/killmails', { involved: ['character:stillness:1'], side: 'kills', q: undefined, scope: { cycles: [6] } }, 'csv')).toBe('killmails_involved-character_stillness_1_side-kills.csv');
    expect(fileName('/v1/entities/:idOrSlug/facts', { id: 'x/../y' }, 'ndjson')).toBe('entities-facts_id-x_.._y.ndjson');
    expect(fileName('/v1/events', { q: 'a'.repeat(500) }, 'csv')).toHaveLength(120 + '.csv'.length);
  });
});
