/**
 * Every query shape the gateway sends, built by the pure builders and compared with exact
 * expected bodies kept as fixture files (test/fixtures/queries): a change to the query DSL is
 * a visible diff. `UPDATE_FIXTURES=1` rewrites them (review the diff). Each body's fields are
 * also checked against the index mapping it is sent to (explicit, nothing dynamic).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { INDICES } from '../../src/indices/all.ts';
import { ROW, rowOfHit, rowsInDocValues, rowsOfIds } from '../../src/indices/description.ts';
import { toCurrentEntityListBody, toCurrentRelationListBody } from '../../src/query/current.ts';
import { toEntityListBody, toEntityLookupBody, toStaticTypeLookupBody } from '../../src/query/entities.ts';
import { type SearchBody, toAskedIdsBody } from '../../src/query/list.ts';
import { toEntityFactsBody, toEntityRelationsBody, toEntitySourcesBody, toSourceListBody } from '../../src/query/provenance.ts';
import { toEventListBody, toKillmailListBody } from '../../src/query/timeline.ts';
import { UNSEPARATED_IDS, needsExactLookup, toAutocompleteBody, toSuggestBody, toTyposBody } from '../../src/query/autocomplete.ts';
import { toGroupsBody, toHistogramBody, toSourceKindsBody } from '../../src/query/groups.ts';
import { queryCases } from './query-cases.ts';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/queries');

/** Field names a body filters, searches or sorts on. */
function fieldsOf(body: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(body)) body.forEach((b) => fieldsOf(b, into));
  else if (body && typeof body === 'object') {
    for (const [key, value] of Object.entries(body)) {
      if (['term', 'terms', 'match', 'match_bool_prefix', 'prefix', 'range', 'exists', 'missing', 'cardinality', 'date_histogram', 'wildcard'].includes(key) && value && typeof value === 'object') {
        if (['exists', 'missing', 'cardinality', 'date_histogram'].includes(key)) into.add((value as { field: string }).field);
        else if (key === 'terms' && typeof (value as { field?: unknown }).field === 'string') into.add((value as { field: string }).field);
        else for (const field of Object.keys(value)) into.add(field);
      }
      if (key === 'completion') into.add((value as { field: string }).field);
      if (key === 'sort' && Array.isArray(value)) for (const clause of value) for (const f of Object.keys(clause)) if (f !== '_score') into.add(f);
      fieldsOf(value, into);
    }
  }
  return into;
}

function mapped(index: string, field: string): boolean {
  const description = INDICES.find((d) => d.name === index)!;
  const [top, sub] = field.split('.');
  const property = description.mapping.mappings.properties[top!] as { type?: string; fields?: Record<string, unknown> } | undefined;
  if (!property || property.type === undefined) return false;
  return sub === undefined || property.fields?.[sub] !== undefined;
}

describe('query bodies', () => {
  const cases: [string, string, SearchBody][] = queryCases({
    toEntityListBody,
    toEntityLookupBody,
    toStaticTypeLookupBody,
    toCurrentEntityListBody,
    toCurrentRelationListBody,
    toEntityFactsBody,
    toEntityRelationsBody,
    toEntitySourcesBody,
    toSourceListBody,
    toEventListBody,
    toKillmailListBody,
    toGroupsBody,
    toHistogramBody,
    toSourceKindsBody,
    toAutocompleteBody,
    toSuggestBody,
    toTyposBody,
    unseparatedIds: () => ({ query: UNSEPARATED_IDS, size: 0 }),
    toAskedIdsBody,
  });

  it.each(cases)('%s matches its fixture', (name, _index, body) => {
    const file = path.join(FIXTURES, `${name}.json`);
    const text = `${JSON.stringify(body, null, 2)}\n`;
    if (process.env.UPDATE_FIXTURES === '1') writeFileSync(file, text);
    expect(existsSync(file), `missing fixture ${file}: run with UPDATE_FIXTURES=1 and review it`).toBe(true);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(body);
  });

  it.each(cases)('%s only uses fields its index maps', (_name, index, body) => {
    for (const field of fieldsOf(body)) expect(mapped(index, field), `${index}.${field}`).toBe(true);
  });
});

describe('mappings', () => {
  it.each(INDICES.map((d) => [d.name, d] as const))('%s is explicit and maps its sort fields', (_name, description) => {
    expect(description.mapping.mappings.dynamic).toBe('strict');
    // The row is kept one way: the only field of `_source`, or binary doc values with no `_source`.
    if (rowsInDocValues(description.mapping)) {
      expect(description.mapping.mappings.properties.row).toEqual({ type: 'binary', doc_values: true });
      expect(description.mapping.mappings._source).toEqual({ enabled: false });
    } else {
      expect(description.mapping.mappings.properties.row).toEqual({ type: 'object', enabled: false });
      expect(description.mapping.mappings._source).toEqual({ includes: ['row'] });
    }
    for (const { field } of description.sort) if (field !== '_score') expect(mapped(description.name, field), field).toBe(true);
    // Cursor positions are checked as text for every sorted field (src/query/list.ts sortKinds).
    for (const { field } of description.sort) {
      const type = (description.mapping.mappings.properties[field] as { type?: string } | undefined)?.type;
      if (field !== '_score') expect(['keyword', 'date_nanos'], `${description.name}.${field}`).toContain(type);
    }
  });
});

describe('needsExactLookup', () => {
  it('sends the exact lookup with text that holds a separator, and with any text when some id or slug lacks one', () => {
    for (const text of ['character:stillness:1', 'character-1-stillness', 'a-b', ':']) expect(needsExactLookup(text, true), text).toBe(true);
    for (const text of ['vesna', 'vesna ko', 'Recipe Tritanium', '']) expect(needsExactLookup(text, true), text).toBe(false);
    for (const text of ['vesna', 'character:stillness:1', '']) expect(needsExactLookup(text, false), text).toBe(true);
  });
});

describe('reading rows by id', () => {
  const long = `character:stillness:${'9'.repeat(600)}`;

  it('asks for every id by its _id in one page, without a count, the row from doc values and stored fields only when asked', () => {
    const body = rowsOfIds(['entity:a', long], true);
    expect(body).toMatchObject({ size: 2, track_total_hits: false, stored_fields: '_none_', docvalue_fields: [ROW] });
    const [short, hashed] = body.query.ids.values;
    expect(short).toBe('entity:a');
    // Elasticsearch refuses _ids over 512 bytes: a long id is asked by the hash the loader wrote.
    expect(hashed).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(rowsOfIds(['entity:a'], true, ['original'])).toMatchObject({ stored_fields: ['original'], docvalue_fields: [ROW] });
    const fromSource = rowsOfIds(['entity:a'], false);
    expect('stored_fields' in fromSource || 'docvalue_fields' in fromSource).toBe(false);
  });

  it('reads a hit\'s row from its doc value or from its _source alike', () => {
    const row = { id: 'entity:a', name: 'Vesna Korr' };
    expect(rowOfHit({ fields: { [ROW]: [Buffer.from(JSON.stringify(row)).toString('base64')] } })).toEqual(row);
    expect(rowOfHit({ _source: { row } })).toEqual(row);
    expect(rowOfHit({})).toBeUndefined();
  });
});
