/**
 * The OpenAPI document against the gateway it describes, over a real Elasticsearch:
 * - drift: on every route, each query parameter the document lists is accepted (no 400), and
 *   every other parameter name of the API is a 400 naming it;
 * - conformance: every route's answers (200 on real records from the bundle, pages, HEAD, 400,
 *   404) have a documented status and content type, and their bodies validate against the
 *   document's schemas (Ajv, JSON Schema 2020-12, formats checked).
 * Record ids come from the bundle files.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeNextExport } from '../../generator/next-export.ts';
import { readAllRows } from '../../generator/read-bundle.ts';
import { bundleIdOf } from '../support/bundle-id.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { expectedBattles } from '../support/battles.ts';

type Json = Record<string, any>;

/** Typed collection → entity type (src/indices/collections.ts, mirrored on purpose). */
const TYPED: Record<string, string> = {
  systems: 'system', characters: 'character', tribes: 'tribe', assemblies: 'assembly', gates: 'gate', regions: 'region', constellations: 'constellation',
  items: 'item', materials: 'material', enemies: 'enemy', recipes: 'recipe', blueprints: 'blueprint', ships: 'ship', structures: 'structure',
};

/** Every query parameter the README's route table names. */
const README_PARAMETERS = [
  'q', 'type', 'entityType', 'profile', 'environment', 'cycles', 'cycle', 'limit', 'cursor', 'kind', 'module', 'package_id', 'transaction_digest',
  'source_id', 'system', 'victim', 'killer', 'reporter', 'npc', 'label', 'exclude', 'loss_type',
  // Query power.
  'since', 'until', 'sort', 'select', 'group_by', 'include_unknown', 'confidence',
  // The freshness loop.
  'since_indexed', 'updated_since',
  // Client power.
  'id', 'involved', 'side', 'format',
  // Battles, rows that left.
  'gap', 'include',
  // History.
  'bundle', 'from', 'to', 'collection', 'change', 'tribe', 'character',
];

let gw: TestGateway;
let doc: Json;
let ajv: InstanceType<typeof Ajv2020>;
/** Path template → a URL of it with real records from the bundle. */
const urls = new Map<string, string>();
let bundleId: string;
let next: string;

beforeAll(async () => {
  // Scale 3: every list has a second page in some scope (for real cursors).
  gw = await startTestGateway({ name: 'openapi', scale: 3, seed: 1 });
  // A second load an hour later, of the same rows but one character moved to another tribe:
  // /v1/bundles has two pages of one, /v1/memberships two of one (a join, a departure), and every
  // `bundle=` below reads the first, kept, bundle rather than the live one.
  next = await mkdtemp(path.join(tmpdir(), 'openapi-next-'));
  const tribes = [...new Set((await readAllRows(gw.bundleDir, 'relations.jsonl')).filter((r) => r.predicate === 'belongs_to').map((r) => String(r.objectEntityId)))];
  await writeNextExport(gw.bundleDir, next, {
    relations: async function* (rows) {
      let moved = false;
      for await (const row of rows) {
        const moves: boolean = !moved && row.predicate === 'belongs_to' && row.objectEntityId === tribes[0];
        moved ||= moves;
        yield moves ? { ...row, objectEntityId: tribes[1] } : row;
      }
    },
  });
  await gw.loadNext(next);
  doc = (await gw.get('/v1/openapi.json')).body;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ ...doc, $id: 'api' });

  const entities = await readAllRows(gw.bundleDir, 'entities.jsonl');
  const first = async (file: string) => String((await readAllRows(gw.bundleDir, file))[0]!.id);
  // An entity with a second page of facts, relations and sources (for real cursors on its subroutes).
  const count = (rows: Json[], ...keys: string[]) => {
    const counts = new Map<string, number>();
    for (const row of rows) for (const key of keys) counts.set(row[key], (counts.get(row[key]) ?? 0) + 1);
    return counts;
  };
  const facts = count(await readAllRows(gw.bundleDir, 'facts.jsonl'), 'entityId');
  const relations = count(await readAllRows(gw.bundleDir, 'relations.jsonl'), 'subjectEntityId', 'objectEntityId');
  const sources = count(await readAllRows(gw.bundleDir, 'entity_sources.jsonl'), 'entityId');
  const entity = entities.find((r) => [facts, relations, sources].every((counts) => (counts.get(r.id) ?? 0) >= 2))!;
  const typeId = entities.map((r) => r.environment === 'stillness' && /:type:(\d+)$/.exec(r.id)?.[1]).find(Boolean);
  // The bundle loaded: the SHA-256 of its manifest (`{bundleId}`, and the value of `bundle=`).
  bundleId = await bundleIdOf(gw.bundleDir);
  const ids: Record<string, string> = {
    events: await first('events.jsonl'),
    killmails: await first('killmails.jsonl'),
    sources: await first('sources.jsonl'),
    artefacts: await first('source_artefacts.jsonl'),
    'chain-objects': await first('chain_objects.jsonl'),
    battles: expectedBattles(await readAllRows(gw.bundleDir, 'killmails.jsonl'), await readAllRows(gw.bundleDir, 'relations.jsonl'), 15)[0]!.id,
  };
  for (const template of Object.keys(doc.paths)) {
    const [, , family] = template.split('/');
    const byType = TYPED[family!] && entities.find((r) => r.entityType === TYPED[family!]);
    // Activity is kept for characters, tribes and systems.
    const subject = template.endsWith('/activity') ? entities.find((r) => r.entityType === 'character')! : byType || entity;
    const url = template
      .replace('{idOrSlug}', encodeURIComponent(byType ? byType.slug : subject.id))
      .replace('{typeId}', String(typeId))
      .replace('{file}', 'manifest.json')
      .replace('{value}', encodeURIComponent(entity.id))
      .replace('{bundleId}', bundleId)
      .replace('{id}', encodeURIComponent(ids[family!]!));
    urls.set(template, url);
  }
}, 300_000);

afterAll(async () => {
  await gw?.close();
  if (next) await rm(next, { recursive: true, force: true });
});

const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** Checks one answer against what the document says `method path` answers. */
function conforms(template: string, method: 'get' | 'head', res: { status: number; headers: Headers; text: string; body: any }): void {
  const label = `${method.toUpperCase()} ${urls.get(template)} → ${res.status}`;
  // HEAD is documented once, as the GET answer without its body.
  const responses = doc.paths[template].get.responses;
  expect(Object.keys(responses), `${label}: status documented`).toContain(String(res.status));
  if (method === 'head') return expect(res.text, label).toBe('');
  let response = responses[res.status];
  if (response.$ref) response = doc.components.responses[response.$ref.split('/').pop()];
  if (!response.content) return expect(res.text, label).toBe('');
  const mediaType = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  expect(Object.keys(response.content), `${label}: content type documented`).toContain(mediaType);
  if (mediaType !== 'application/json' || !response.content[mediaType].schema) return;
  const pointer = responses[res.status].$ref
    ? `api#/components/responses/${responses[res.status].$ref.split('/').pop()}/content/application~1json/schema`
    : `api#/paths/${escape(template)}/get/responses/${res.status}/content/application~1json/schema`;
  const validate = ajv.getSchema(pointer)!;
  expect(validate, pointer).toBeDefined();
  const valid = validate(JSON.parse(res.text));
  expect(valid ? [] : validate.errors!.slice(0, 5), `${label}: body matches the schema`).toEqual([]);
}

/** A GET as `gw.get` answers it; an event stream (never finished) is read up to its headers, then closed. */
async function answer(template: string, url: string): Promise<{ status: number; headers: Headers; text: string; body: any }> {
  if (!doc.paths[template].get.responses[200]?.content?.['text/event-stream']) return gw.get(url);
  const abort = new AbortController();
  const res = await fetch(`${gw.url}${url}`, { signal: abort.signal });
  if (res.ok) {
    abort.abort();
    return { status: res.status, headers: res.headers, text: '', body: undefined };
  }
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: JSON.parse(text) };
}

const queryNames = (template: string): string[] => doc.paths[template].get.parameters.filter((p: Json) => p.in === 'query').map((p: Json) => p.name);

/** A value the parameter's schema admits. */
function sampleValue(schema: Json): string {
  if (schema.examples) return String(schema.examples[0]);
  if (schema.enum) return String(schema.enum[0]);
  if (schema.type === 'integer') return String(schema.minimum ?? 1);
  if (schema.type === 'boolean') return 'true';
  if (schema.pattern) {
    // A list of names (group_by has no examples: a generator would send them beside select): its first.
    const first = /^\^\(\?:([\w:]+)[|)]/.exec(schema.pattern)?.[1];
    return [first, 'current', '6'].find((v) => v !== undefined && new RegExp(schema.pattern, 'u').test(v))!;
  }
  return 'x';
}

const withParam = (url: string, name: string, value: string) => `${url}${url.includes('?') ? '&' : '?'}${encodeURIComponent(name)}=${encodeURIComponent(value)}`;

/** Parameters that only narrow another one, sent with it (`side` narrows `involved`). */
const NARROWS: Record<string, string> = { side: 'involved' };

describe('OpenAPI drift: the document lists exactly the parameters each route accepts', () => {
  it('accepts every documented query parameter on every route', async () => {
    for (const template of Object.keys(doc.paths)) {
      for (const parameter of doc.paths[template].get.parameters.filter((p: Json) => p.in === 'query')) {
        let url = withParam(urls.get(template)!, parameter.name, parameter.name === 'bundle' ? bundleId : sampleValue(parameter.schema));
        const narrowed = doc.paths[template].get.parameters.find((p: Json) => p.name === NARROWS[parameter.name]);
        if (narrowed) url = withParam(url, narrowed.name, sampleValue(narrowed.schema));
        if (parameter.name === 'cursor') {
          // A real cursor: the next page of the same request (`limit` does not bind it), in the
          // first scope that has two rows.
          const scopes = queryNames(template).includes('cycles') ? ['', 'cycles=all', 'cycles=all&environment=utopia'] : [''];
          const pages = scopes.map((scope) => withParam(scope ? `${urls.get(template)}?${scope}` : urls.get(template)!, 'limit', '1'));
          const found = (await Promise.all(pages.map(async (page) => ({ page, cursor: (await gw.get(page)).body.nextCursor })))).find((p) => p.cursor);
          expect(found, `${template} has a second page`).toBeDefined();
          url = withParam(found!.page, 'cursor', found!.cursor);
        }
        const res = await answer(template, url);
        expect(res.status, `${url}: ${JSON.stringify(res.body?.error)}`).not.toBe(400);
        conforms(template, 'get', res);
      }
    }
  });

  it('refuses every other parameter of the API on every route, naming it', async () => {
    const all = new Set(Object.keys(doc.paths).flatMap(queryNames));
    // A parameter left out of the document everywhere would otherwise go untested.
    // `cycle`, `cycles`' alias, is said in its description rather than listed.
    expect([...all, 'cycle'].sort()).toEqual([...README_PARAMETERS].sort());
    for (const template of Object.keys(doc.paths)) {
      const accepted = new Set(queryNames(template));
      for (const name of [...all, 'zz_undocumented'].filter((n) => !accepted.has(n))) {
        const url = withParam(urls.get(template)!, name, '1');
        const res = await gw.get(url);
        expect(res.status, url).toBe(400);
        expect(res.body.error.details, url).toEqual({ parameter: name });
        conforms(template, 'get', res);
      }
    }
  });
});

describe('OpenAPI conformance: answers are as documented', () => {
  it('answers every route (real records) with a documented status, content type and body, and HEAD alike', async () => {
    for (const [template, url] of urls) {
      const res = await answer(template, url);
      expect(res.status, `${url}: ${res.text.slice(0, 200)}`).toBe(200);
      conforms(template, 'get', res);
      const head = await gw.get(url, { method: 'HEAD' });
      expect(head.status, url).toBe(200);
      conforms(template, 'head', head);
    }
  });

  it('answers second pages, full pages and every scope as documented', async () => {
    for (const template of Object.keys(doc.paths).filter((t) => queryNames(t).includes('cursor'))) {
      for (const query of ['limit=200', 'cycles=all&limit=3', 'cycles=current', 'cycle=5', 'environment=utopia']) {
        if (query.includes('cycle') && !queryNames(template).includes('cycles')) continue;
        const url = `${urls.get(template)}?${query}`;
        const res = await gw.get(url);
        conforms(template, 'get', res);
        if (res.body.nextCursor) conforms(template, 'get', await gw.get(`${url}&cursor=${encodeURIComponent(res.body.nextCursor)}`));
      }
    }
  });

  it('answers unknown records and malformed values with documented errors', async () => {
    // What an identifier names is a list: nothing named is an empty one, not a 404.
    for (const template of Object.keys(doc.paths).filter((t) => t.includes('{'))) {
      const missing = template.replace(/\{\w+\}/g, 'no-such-record-0');
      const res = await gw.get(missing);
      expect(res.status, missing).toBe(template === '/v1/resolve/{value}' ? 200 : 404);
      conforms(template, 'get', res);
    }
    for (const [template, query] of [['/v1/killmails', 'npc=yes'], ['/v1/entities', 'limit=0'], ['/v1/events', 'cycles=6&cycle=5'], ['/v1/search', 'cursor=abc']]) {
      const res = await gw.get(`${template}?${query}`);
      expect(res.status, query).toBe(400);
      conforms(template!, 'get', res);
    }
    const huge = await gw.get('/v1/entities', { headers: { 'X-Padding': 'x'.repeat(20_000) } });
    expect(huge.status).toBe(431);
    conforms('/v1/entities', 'get', huge);
    const range = await gw.get('/v1/exports/manifest.json', { headers: { Range: 'bytes=999999999-' } });
    expect(range.status).toBe(416);
    conforms('/v1/exports/{file}', 'get', range);
  });
});
