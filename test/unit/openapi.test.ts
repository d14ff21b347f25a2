/**
 * The OpenAPI document as `/v1/openapi.json` serves it, without Elasticsearch (the document is
 * written from the router alone): valid OpenAPI 3.1 for a maintained validator, one path per
 * route with its GET (HEAD said once, in the info text), each tagged with its family, the
 * errors each kind of route can answer, and lists that answer files with `format`.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../src/compose.ts';
import { advertisedRoutes } from '../../src/routes/service.ts';
import { composed } from '../../harness/composed.ts';

type Json = Record<string, any>;

// Nothing listens on port 9: the document must not need Elasticsearch.
const gateway = await composed({ REGISTRY_NAME: 'test-registry', INDEX_PREFIX: 'openapi-unit' });
const { deps } = gateway;

let server: ReturnType<Gateway['app']['listen']>;
let base: string;
let doc: Json;
let contentType: string | null;

beforeAll(async () => {
  server = gateway.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const response = await fetch(`${base}/v1/openapi.json`);
  expect(response.status).toBe(200);
  contentType = response.headers.get('content-type');
  doc = (await response.json()) as Json;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await gateway.release();
});

const operations = () => Object.entries(doc.paths as Json).map(([path, item]) => ({ path, item: item as Json, get: item.get as Json }));

describe('/v1/openapi.json', () => {
  it('is JSON outside the envelope', () => {
    expect(contentType).toMatch(/^application\/json/);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.data).toBeUndefined();
  });

  it('is valid OpenAPI 3.1 (swagger-parser), and the validator does reject a broken document', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc) as any)).resolves.toBeTruthy();
    const broken = structuredClone(doc);
    broken.paths['/v1/killmails'].get.parameters[0].in = 'body';
    await expect(SwaggerParser.validate(broken as any)).rejects.toThrow();
    const badRef = structuredClone(doc);
    badRef.paths['/v1/killmails'].get.responses[200].content['application/json'].schema.properties.data.items = { $ref: '#/components/schemas/Nope' };
    await expect(SwaggerParser.validate(badRef as any)).rejects.toThrow();
  });

  it('has one path per route of the router, each with one GET operation (HEAD said once, in the info text) and unique operation ids', () => {
    const routed = gateway.router.stack.filter((layer) => layer.methods.includes('GET')).map((layer) => String(layer.path).replace(/:(\w+)/g, '{$1}'));
    expect(Object.keys(doc.paths).sort()).toEqual([...new Set(routed)].sort());
    const ids = operations().map(({ get }) => get.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { path, item } of operations()) expect(Object.keys(item), path).toEqual(['get']);
    expect(doc.info.description).toMatch(/GET and HEAD/);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(advertisedRoutes(gateway.router)));
  });

  it('tags every operation with exactly one family, each family declared once and used', () => {
    const families = ['entities', 'typed collections', 'current state', 'provenance', 'events', 'killmails', 'operations', 'exports', 'bundles', 'meta'];
    expect(doc.tags.map((t: Json) => t.name)).toEqual(families);
    const used = new Map<string, string[]>();
    for (const { path, get } of operations()) {
      expect(get.tags, path).toHaveLength(1);
      used.set(get.tags[0], [...(used.get(get.tags[0]) ?? []), path]);
    }
    expect([...used.keys()].sort()).toEqual([...families].sort());
    // A few paths whose family is not read off their first segment.
    const tagOf = (path: string) => doc.paths[path].get.tags[0];
    expect(tagOf('/v1/entities/{idOrSlug}')).toBe('entities');
    expect(tagOf('/v1/entities/{idOrSlug}/facts')).toBe('provenance');
    expect(tagOf('/v1/characters/{idOrSlug}')).toBe('typed collections');
    expect(tagOf('/v1/current/characters')).toBe('current state');
    expect(tagOf('/v1/ready')).toBe('meta');
  });

  it('documents files (format=csv|ndjson) on every list, and on nothing else', () => {
    for (const { path, get } of operations()) {
      const content = Object.keys(get.responses[200].content ?? {});
      const takesFormat = get.parameters.some((p: Json) => p.name === 'format');
      // `/v1/bundles` pages the bundle record, not an index's rows: no file of it.
      const isList = get.responses[200].content?.['application/json']?.schema?.properties?.nextCursor !== undefined && path !== '/v1/bundles';
      expect(takesFormat, path).toBe(isList);
      if (path.endsWith('/exports/{file}')) continue;
      expect(content.includes('text/csv'), path).toBe(isList);
      expect(content.includes('application/x-ndjson'), path).toBe(isList);
      if (isList) expect(Object.keys(get.responses[200].headers), path).toEqual(expect.arrayContaining(['Content-Disposition', 'X-Total-Count', 'X-Truncated']));
    }
  });

  it('declares every path parameter of a path as required, and nothing else in the path', () => {
    for (const { path, get } of operations()) {
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const declared = get.parameters.filter((p: Json) => p.in === 'path');
      expect(declared.map((p: Json) => p.name), path).toEqual(inPath);
      for (const p of declared) expect(p.required, `${path} ${p.name}`).toBe(true);
    }
  });

  it('documents the errors each route can answer', () => {
    for (const { path, get } of operations()) {
      const statuses = Object.keys(get.responses);
      expect(statuses, path).toEqual(expect.arrayContaining(['200', '400', '429', '431', '500']));
      // A route naming bundles (`bundle=`, `/v1/changes`' `from` and `to`) answers 404 and 410 for them.
      const pins = get.parameters.some((p: Json) => ['bundle', 'from', 'to'].includes(p.name));
      expect(statuses.includes('404'), path).toBe(path.includes('{') || path.startsWith('/v1/ops/') || pins);
      if (pins) expect(statuses, path).toContain('410');
      expect(statuses.includes('416'), path).toBe(path.endsWith('/exports/{file}'));
      const noIndex = ['/v1/health', '/v1', '/', '/metrics', '/v1/metrics', '/v1/openapi.json'].includes(path);
      expect(statuses.includes('503'), path).toBe(!noIndex);
      expect(statuses.includes('504'), path).toBe(!noIndex);
    }
  });

  it('gives every error status the one error shape with its code', () => {
    const codes: Record<string, string | string[]> = {
      400: 'bad_request',
      404: 'not_found',
      416: 'bad_request',
      429: 'rate_limited',
      431: 'bad_request',
      500: 'internal_error',
      503: ['unavailable', 'overloaded'],
      504: 'timeout',
    };
    const { get } = operations().find((o) => o.path === '/v1/exports/{file}')!;
    for (const [status, code] of Object.entries(codes)) {
      const response = doc.components.responses[get.responses[status].$ref.split('/').pop()];
      const schema = doc.components.schemas[response.content['application/json'].schema.$ref.split('/').pop()];
      expect(schema.required).toEqual(['error', 'meta']);
      expect(schema.properties.error.properties.code).toEqual(Array.isArray(code) ? { enum: code } : { const: code });
      // Refusals say when to come back; every answer may carry the rate-limit fields.
      if (status === '429' || status === '503') expect(Object.keys(response.headers), status).toContain('Retry-After');
      expect(Object.keys(response.headers), status).toEqual(expect.arrayContaining(['RateLimit', 'RateLimit-Policy']));
    }
    expect(Object.keys(get.responses[200].headers)).toEqual(expect.arrayContaining(['RateLimit', 'RateLimit-Policy']));
  });

  it('documents lists as pages with nextCursor, and records as open objects', () => {
    const killmails = doc.paths['/v1/killmails'].get.responses[200].content['application/json'].schema;
    // Rows, or their groups with group_by; meta with the count.
    expect(killmails.properties.data).toEqual({
      anyOf: [
        { type: 'array', items: { $ref: '#/components/schemas/Killmail' } },
        { type: 'array', items: { anyOf: [{ $ref: '#/components/schemas/Killmail' }, { $ref: '#/components/schemas/Tombstone' }] }, description: 'With `include=removed`: rows, and tombstones of the rows that left.' },
        { type: 'array', items: { type: 'object', description: 'With `select`: the row reduced to `id` and the selected fields.' } },
        { type: 'array', items: { $ref: '#/components/schemas/Group' } },
        { type: 'object', description: 'Several `group_by` fields: the groups of each, by field name.', additionalProperties: { type: 'array', items: { $ref: '#/components/schemas/Group' } } },
      ],
    });
    expect(killmails.properties.meta).toEqual({ $ref: '#/components/schemas/ListMeta' });
    expect(doc.components.schemas.ListMeta.required).toEqual(['registry', 'apiVersion', 'count', 'countIsExact']);
    expect(killmails.properties.nextCursor).toBeDefined();
    expect(killmails.required).toEqual(['data', 'meta']);
    const detail = doc.paths['/v1/killmails/{id}'].get.responses[200].content['application/json'].schema;
    expect(detail.properties.nextCursor).toBeUndefined();
    for (const name of ['Entity', 'Fact', 'Killmail', 'Event', 'Source', 'CurrentEntity']) {
      expect(doc.components.schemas[name].additionalProperties, name).toBeUndefined();
    }
    // A fact's value is any JSON.
    expect(doc.components.schemas.Fact.properties.value.type).toBeUndefined();
  });

  it('lists the query parameters each list route validates', () => {
    const names = (path: string) => doc.paths[path].get.parameters.filter((p: Json) => p.in === 'query').map((p: Json) => p.name);
    const shape = ['sort', 'select', 'group_by', 'include_unknown', 'format'];
    // `cycle` is accepted as `cycles`' alias, said in its description (not listed: it excludes it).
    expect(names('/v1/killmails')).toEqual(['environment', 'cycles', 'limit', 'cursor', 'q', 'id', 'involved', 'side', 'system', 'victim', 'killer', 'reporter', 'npc', 'label', 'exclude', 'loss_type', 'since', 'until', 'since_indexed', 'include', ...shape, 'bundle']);
    expect(names('/v1/characters')).toContain('profile');
    expect(names('/v1/systems')).not.toContain('profile');
    expect(names('/v1/entities/{idOrSlug}/facts')).toEqual(['limit', 'cursor', 'confidence', 'select', 'group_by', 'include_unknown', 'format', 'bundle']);
    // Every JSON read of the index takes `bundle=`; a stream, a file and the bundle record do not.
    expect(names('/v1/killmails/stream')).not.toContain('bundle');
    expect(names('/v1/bundles')).not.toContain('bundle');
    expect(names('/v1/health')).toEqual([]);
  });
});
