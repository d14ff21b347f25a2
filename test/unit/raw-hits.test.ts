/**
 * Rows passed through as bytes: what `rawHits` cuts out of a search response (or decodes from
 * doc values) must be exactly what a JSON parser reads there, for rows full of the characters that trip scanners (quotes,
 * backslashes, braces inside strings, every script), and the envelope around them must parse
 * to what `toEnvelope` would have sent.
 */
import { describe, expect, it } from 'vitest';
import { createMeta, toEnvelope, toRawEnvelope } from '../../src/http/envelope.ts';
import { RawHitsError, rawHits, walkPage } from '../../src/search/raw-hits.ts';
import { rowRequest } from '../../src/search/search-service.ts';

const TRICKY = [
  'plain',
  'a "quoted" word',
  'back\\slash at the end\\',
  '\\"',
  '{not an object} [nor an array]',
  'Nova 🚀 北京 Vesna Korr',
  '\u2028\u2029\u0000\u001f',
  '',
  '"',
  '\\\\"}',
];

function response(rows: unknown[], pretty = false): { buf: Buffer; rows: unknown[]; sorts: unknown[][] } {
  const sorts = rows.map((_, i) => [`2026-06-30T04:41:4${i % 10}.777Z`, `event:"x"\\${i}`]);
  const hits = rows.map((row, i) => ({ _source: { row }, sort: sorts[i] }));
  return { buf: Buffer.from(JSON.stringify({ hits: { hits } }, null, pretty ? 2 : undefined)), rows, sorts };
}

describe('rawHits', () => {
  it('cuts out each row and sort exactly where a parser reads them', () => {
    const rows = TRICKY.map((text, i) => ({ id: `r${i}`, text, nested: { list: [text, { deeper: [1, -2.5e-3, true, null] }] }, n: i }));
    for (const pretty of [false, true]) {
      const { buf, sorts } = response(rows, pretty);
      const { hits } = rawHits(buf);
      expect(hits.map((h) => JSON.parse(h.row.toString('utf8')))).toEqual(rows);
      expect(hits.map((h) => JSON.parse(h.sort!.toString('utf8')))).toEqual(sorts);
    }
  });

  it('takes rows that are not objects, and any key order', () => {
    const buf = Buffer.from('{"hits":{"hits":[{"sort":[1],"_source":{"x":1,"row":"text"}},{"_source":{"row":[1,{"a":"]"}]}},{"_source":{"row":-1.5e10}}]}}');
    const { hits } = rawHits(buf);
    expect(hits.map((h) => h.row.toString())).toEqual(['"text"', '[1,{"a":"]"}]', '-1.5e10']);
    expect(hits.map((h) => h.sort?.toString())).toEqual(['[1]', undefined, undefined]);
  });

  it('decodes rows kept as doc values (fields.row, base64), cut or walked, beside other fields', () => {
    const rows = TRICKY.map((text, i) => ({ id: `r${i}`, text, n: i }));
    const sorts = rows.map((_, i) => [`2026-06-30T04:41:4${i}.000Z`, `event:${i}`]);
    const hits = rows.map((row, i) => ({ _index: 'events-1', _score: null, fields: { other: ['x'], row: [Buffer.from(JSON.stringify(row)).toString('base64')] }, sort: sorts[i] }));
    const buf = Buffer.from(JSON.stringify({ took: 1, hits: { max_score: null, hits } }));
    for (const page of [rawHits(buf), walkPage(buf, buf.toString('latin1'), false)]) {
      expect(page.hits.map((h) => JSON.parse(h.row.toString('utf8')))).toEqual(rows);
      expect(page.hits.map((h) => JSON.parse(h.sort!.toString('utf8')))).toEqual(sorts);
    }
    expect(() => rawHits(Buffer.from('{"hits":{"hits":[{"fields":{"other":["x"]},"sort":[1]}]}}'))).toThrow(RawHitsError);
  });

  it('reads an empty page (filter_path leaves {} when nothing matched)', () => {
    expect(rawHits(Buffer.from('{}'))).toEqual({ hits: [] });
    expect(rawHits(Buffer.from('{"hits":{"hits":[]}}'))).toEqual({ hits: [] });
  });

  it('reads the count of matching rows wherever it stands, exact or a lower bound', () => {
    const counted = rawHits(Buffer.from('{"hits":{"total":{"value":12,"relation":"eq"},"hits":[{"_source":{"row":1}}]}}'));
    expect(counted).toEqual({ hits: [{ row: Buffer.from('1'), sort: undefined }], total: { value: 12, relation: 'eq' } });
    const after = rawHits(Buffer.from('{"hits":{"hits":[],"total":{"relation":"gte","value":10000}}}'));
    expect(after).toEqual({ hits: [], total: { value: 10000, relation: 'gte' } });
  });

  it('cuts compact pages of object rows without walking the rows, as a parser reads them', () => {
    const rows = TRICKY.map((text, i) => ({ id: `r${i}`, text, tail: '}},"sort":[', nested: { list: [text, {}] } }));
    const { buf, sorts } = response(rows);
    const cut = walkPage(buf, buf.toString('latin1'), true);
    expect(cut.hits.map((h) => JSON.parse(h.row.toString('utf8')))).toEqual(rows);
    expect(cut.hits.map((h) => JSON.parse(h.sort!.toString('utf8')))).toEqual(sorts);
    // Not cut: pretty-printed, rows that are not objects, hits without sort values.
    for (const text of [response(rows, true).buf.toString('latin1'), '{"hits":{"hits":[{"_source":{"row":1},"sort":[1]}]}}', '{"hits":{"hits":[{"_source":{"row":{}}}]}}']) {
      expect(() => walkPage(Buffer.from(text, 'latin1'), text, true)).toThrow(RawHitsError);
    }
  });

  it('cuts a whole response as Elasticsearch sends it without filter_path (its other keys and each hit\'s _index, _id, _score walked)', () => {
    const rows = TRICKY.map((text, i) => ({ id: `r${i}`, text, nested: { list: [text, {}] } }));
    const { sorts } = response(rows);
    const hits = rows.map((row, i) => ({ _index: 'x-events-1', _id: `id"${i}\\`, _score: null, _source: { row }, sort: sorts[i] }));
    for (const total of [undefined, { value: 12, relation: 'eq' }]) {
      const whole = { took: 3, timed_out: false, _shards: { total: 1, successful: 1, skipped: 0, failed: 0 }, hits: { ...(total && { total }), max_score: null, hits } };
      const buf = Buffer.from(JSON.stringify(whole));
      const cut = walkPage(buf, buf.toString('latin1'), true);
      expect(cut.hits.map((h) => JSON.parse(h.row.toString('utf8')))).toEqual(rows);
      expect(cut.hits.map((h) => JSON.parse(h.sort!.toString('utf8')))).toEqual(sorts);
      expect(rawHits(buf)).toEqual(total ? { hits: cut.hits, total } : { hits: cut.hits });
    }
  });

  it('walks every byte when a row holds a key `sort` that the cut would take for the hit\'s own', () => {
    // Each of these rows holds `}},"sort":[`, and the last one what looks like the next hit too.
    const rows = [
      { a: { b: {} }, sort: ['inside'], after: 1 },
      { deep: { x: { y: {} }, sort: [1, { z: {} }] }, n: 2 },
      { p: { q: {} }, sort: ['fake'], z: { _source: { row: { c: 1 } } } },
      // Cut here, the walk reads a whole page of hits in this row and stops before the true end.
      { w: [{ p: { q: {} }, sort: ['fake'] }, { _source: { row: { c: 1 } }, sort: ['x'] }] },
    ];
    for (const page of [...rows.map((row) => [row]), rows]) {
      const { buf, sorts } = response(page);
      expect(buf.toString().split('}},"sort":[').length - 1).toBeGreaterThan(page.length);
      const { hits } = rawHits(buf);
      expect(hits.map((h) => JSON.parse(h.row.toString('utf8')))).toEqual(page);
      expect(hits.map((h) => JSON.parse(h.sort!.toString('utf8')))).toEqual(sorts);
    }
  });

  it.each([
    ['bytes after the response', '{"hits":{"hits":[{"_source":{"row":{}},"sort":[1]}]}}}'],
    ['a truncated response', '{"hits":{"hits":[{"_source":{"row":{"a":"b'],
    ['a hit without a row', '{"hits":{"hits":[{"_source":{}}]}}'],
    ['not an object', '[1,2]'],
    ['a missing comma', '{"hits":{"hits":[{"_source":{"row":1} "sort":[1]}]}}'],
  ])('refuses %s', (_name, text) => {
    expect(() => rawHits(Buffer.from(text))).toThrow(RawHitsError);
  });
});

describe('raw envelope', () => {
  const meta = createMeta('blackrelay-api');

  it('parses to the envelope toEnvelope builds, nextCursor last and only when given', () => {
    const rows = TRICKY.map((text, i) => ({ id: i, text }));
    const raw = rows.map((r) => Buffer.from(JSON.stringify(r)));
    for (const cursor of [undefined, 'abc.def']) {
      const bytes = toRawEnvelope(raw, meta, cursor);
      expect(bytes.toString('utf8')).toBe(JSON.stringify(toEnvelope(rows, meta, cursor)));
    }
    expect(toRawEnvelope([], meta).toString()).toBe(JSON.stringify(toEnvelope([], meta)));
  });
});

describe('rowRequest', () => {
  const rows = { docValueRows: ['events', 'entities'] };
  it('asks for doc-values rows only of the indices the generation says keep them so', () => {
    expect(rowRequest(rows, 'events', { size: 5 })).toEqual({ size: 5, stored_fields: '_none_', docvalue_fields: ['row'] });
    expect(rowRequest(rows, 'killmails', { size: 5 })).toEqual({ size: 5 });
    // A generation written before rows moved to doc values keeps them in _source.
    expect(rowRequest({}, 'events', { size: 5 })).toEqual({ size: 5 });
  });

  it('leaves a search that returns no rows as it is, and reads suggestions and filter paths where the rows are', () => {
    expect(rowRequest(rows, 'events', { size: 0 })).toEqual({ size: 0 });
    expect(rowRequest(rows, 'events', { _source: false, docvalue_fields: ['id'] })).toEqual({ _source: false, docvalue_fields: ['id'] });
    const suggest = { s: { prefix: 've', completion: { field: 'suggest' } } };
    expect(rowRequest(rows, 'entities', { size: 0, suggest, filter_path: 'hits.hits._source.row,suggest.s.options._source.row' })).toEqual({
      size: 0,
      suggest,
      stored_fields: '_none_',
      docvalue_fields: ['row'],
      filter_path: 'hits.hits.fields.row,suggest.s.options.fields.row',
    });
    expect(rowRequest(rows, 'entities', { docvalue_fields: ['id'] }).docvalue_fields).toEqual(['id', 'row']);
  });
});
