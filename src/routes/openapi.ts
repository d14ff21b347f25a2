/**
 * `/v1/openapi.json`: the API described as OpenAPI 3.1, written from the router itself. Each
 * route was registered with its operation (operation.ts): its query parameters are the very
 * declarations the edge validates with, its path parameters the declared `PATH_PARAMETERS`,
 * its answer a schema from records.ts. Paths and the errors each route can answer follow from
 * that; nothing here is kept by hand per route. Each operation is tagged with its family (TAGS,
 * by path), which `/docs/` shows as groups. HEAD, which the router answers for every GET route,
 * is said once in the info text rather than documented as a copy of each operation.
 *
 * Not described: `OPTIONS` (a CORS preflight answered 204 on any path) and the 405 every other
 * method gets (an operation cannot document a method it does not have); the info text says so.
 */
import { DEFAULT_DOWNLOAD_MAX_ROWS } from '../config.ts';
import type { ErrorCode } from '../errors.ts';
import { BUNDLE_GENERATED_AT_HEADER, BUNDLE_ID_HEADER } from '../http/envelope.ts';
import { POINTS_IN_WORDS } from '../limits/request-cost.ts';
import type { AnyParameter } from '../query/parameters.ts';
import { IF_NONE_MATCH, PATH_PARAMETERS } from '../query/route-parameters.ts';
import type { AppRouter, RouteDeps } from './context.ts';
import { type Operation, getRoutes, route } from './operation.ts';
import { TYPED_COLLECTIONS } from '../indices/collections.ts';
import { type JsonSchema, SCHEMAS, ref } from './records.ts';

type Json = Record<string, unknown>;

const INFO_DESCRIPTION = [
  'Read-only JSON API over the registry export bundle, served from Elasticsearch.',
  '',
  'JSON answers are `{data, meta, nextCursor?}`; a list with more rows has `nextCursor`: pass it back as `cursor`, with the same other parameters. Errors are `{error: {code, message, details?}, meta}`; a bad parameter is named in `details.parameter`.',
  '',
  `Every client has a budget of points per window (${POINTS_IN_WORDS}; downloads are limited by how many run at once): each answer carries \`RateLimit-Policy\` and \`RateLimit\` (draft-ietf-httpapi-ratelimit-headers-11), and past the budget the answer is 429 \`rate_limited\` with \`Retry-After\`. When Elasticsearch is at capacity the gateway answers 503 \`overloaded\` with \`Retry-After\` at once instead of queueing.`,
  '',
  `List routes also answer the whole filtered list as a file: \`format=csv\` or \`format=ndjson\` (at most ${DEFAULT_DOWNLOAD_MAX_ROWS.toLocaleString('en')} rows by default; \`X-Total-Count\`, \`X-Truncated\`).`,
  '',
  'Query parameters are strict: an unknown or repeated parameter is a 400 naming it. Values are trimmed and an empty value counts as absent. Every route answers GET and HEAD (HEAD: the same status and headers as GET, without a body; not listed again per route); OPTIONS on any path is a CORS preflight (204); any other method is 405 `method_not_allowed` with `Allow`. Requests the HTTP parser refuses get the same error shape: 400 (not valid HTTP), 408 (not received in time), 431 (headers over 16 KB).',
].join('\n');

const ERRORS: Record<number, { code: ErrorCode | ErrorCode[]; name: string; description: string }> = {
  400: { code: 'bad_request', name: 'BadRequest', description: 'A parameter is unknown, repeated or invalid (`details.parameter` names it).' },
  404: { code: 'not_found', name: 'NotFound', description: 'No such record, file or document.' },
  410: { code: 'gone', name: 'Gone', description: 'A record the registry held and removed: `details.removedAt` says when (kept `TOMBSTONE_DAYS`); or a `bundle` no longer kept here: `details.oldestKept` names the oldest that is.' },
  416: { code: 'bad_request', name: 'RangeNotSatisfiable', description: 'The `Range` starts past the end of the file (`details.size` is its size).' },
  429: { code: 'rate_limited', name: 'RateLimited', description: 'This client spent its budget (`RateLimit-Policy`, `RateLimit`); retry after `Retry-After` seconds.' },
  431: { code: 'bad_request', name: 'HeadersTooLarge', description: "The request line and headers exceed Node's 16 KB (answered before routing)." },
  500: { code: 'internal_error', name: 'InternalError', description: 'An unexpected failure (never an Elasticsearch text).' },
  503: {
    code: ['unavailable', 'overloaded'],
    name: 'Unavailable',
    description: 'Elasticsearch (for `/v1/exports`, also the object store a generation is served from) is unreachable or no bundle is loaded (`unavailable`), or at capacity (`overloaded`); retry after `Retry-After` seconds.',
  },
  504: { code: 'timeout', name: 'Timeout', description: 'Elasticsearch did not answer in time.' },
};

/** The families of the API, in the order `/docs/` shows them; each path belongs to the first that matches. */
const TYPED = Object.keys(TYPED_COLLECTIONS).join('|');
export const TAGS: { name: string; description: string; paths: RegExp }[] = [
  { name: 'entities', description: 'Search, list and look up entities; autocomplete; what any identifier names.', paths: /^\/v1\/(search|autocomplete|entities(\/\{idOrSlug\})?|resolve\/\{value\})$/ },
  { name: 'typed collections', description: 'Entities of one type (`/v1/characters`, `/v1/systems`, …) and the static types.', paths: new RegExp(`^/v1/(${TYPED}|types)(/\\{\\w+\\})?$`) },
  { name: 'current state', description: 'The current state of characters, tribes, assemblies and their relations.', paths: /^\/v1\/current\// },
  { name: 'provenance', description: 'Facts, relations and sources of an entity; sources and their artefacts.', paths: /^\/v1\/(entities\/\{idOrSlug\}\/(facts|relations|sources|history)|sources|artefacts)/ },
  { name: 'events', description: 'Public chain events, and the chain objects they touched.', paths: /^\/v1\/(events|chain-objects)/ },
  { name: 'killmails', description: "Killmails, by involvement, as resolved and as reported; battles; a character's, tribe's or system's activity.", paths: /^\/v1\/(killmails|battles|entities\/\{idOrSlug\}\/activity)/ },
  { name: 'operations', description: 'Operational documents of the ingest: freshness, cursors, coverage, gaps.', paths: /^\/v1\/ops\// },
  { name: 'exports', description: 'The files of the live export bundle.', paths: /^\/v1\/exports\// },
  { name: 'bundles', description: 'Every bundle loaded here, each kept one readable with `bundle=` on any read route, and its files; what changed between two of them, and who joined or left a tribe.', paths: /^\/v1\/(bundles|changes|memberships)/ },
  { name: 'meta', description: 'The service: about, health, readiness, metrics, this document.', paths: /^\/(v1(\/(health|ready|metrics|openapi\.json))?|metrics)?$/ },
];

/** The family of a path (a path no family claims is a mistake of whoever added it). */
export function tagOf(path: string): string {
  const tag = TAGS.find((t) => t.paths.test(path));
  if (!tag) throw new Error(`${path}: no OpenAPI tag matches (routes/openapi.ts TAGS)`);
  return tag.name;
}

const RETRY_AFTER = { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } };

/** On every answer while limits are on (src/http/middleware/rate-limit.ts). */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': {
    description: 'Quota policies (draft-ietf-httpapi-ratelimit-headers-11): `"default";q=<points>;w=<seconds>` per client, and `"downloads";q=<n>;qu="concurrent-requests"`.',
    schema: { type: 'string' },
  },
  RateLimit: { description: '`"default";r=<points left>;t=<seconds until the window renews>`; on exports `"downloads";r=<downloads left>`.', schema: { type: 'string' } },
};

/** What every answer read from a generation says it was computed from (src/http/envelope.ts). */
const BUNDLE_META = {
  bundleId: { type: 'string', description: 'The bundle the answer was computed from (the SHA-256 of its `manifest.json`); absent where nothing was read (health, an error before a read).' },
  bundleGeneratedAt: { type: ['string', 'null'], format: 'date-time', description: "That bundle's `generatedAt`, as its manifest says." },
};

/** The same as headers, on every answer read from a generation: JSON, CSV, NDJSON, files and event streams. */
const BUNDLE_HEADERS = {
  [BUNDLE_ID_HEADER]: { description: '`meta.bundleId`: the bundle the answer was computed from.', schema: { type: 'string' } },
  [BUNDLE_GENERATED_AT_HEADER]: { description: "`meta.bundleGeneratedAt`: that bundle's `generatedAt`.", schema: { type: 'string', format: 'date-time' } },
};

const META: JsonSchema = {
  type: 'object',
  properties: { registry: { type: 'string' }, apiVersion: { const: 'v1' }, ...BUNDLE_META },
  required: ['registry', 'apiVersion'],
  additionalProperties: false,
};

function errorSchema(code: ErrorCode | ErrorCode[]): JsonSchema {
  const error = {
    type: 'object',
    properties: {
      code: Array.isArray(code) ? { enum: code } : { const: code },
      message: { type: 'string' },
      details: { type: 'object', description: '`parameter`: the parameter at fault; `size`: the file size (416).' },
    },
    required: ['code', 'message'],
    additionalProperties: false,
  };
  return { type: 'object', properties: { error, meta: { $ref: '#/components/schemas/Meta' } }, required: ['error', 'meta'], additionalProperties: false };
}

/** `meta` of a list: the rows matched, and with `group_by` the groups. */
const LIST_META: JsonSchema = {
  type: 'object',
  properties: {
    registry: { type: 'string' },
    apiVersion: { const: 'v1' },
    ...BUNDLE_META,
    count: { type: 'integer', minimum: 0, description: 'Rows matching the filters and scope (not the page).' },
    countIsExact: { type: 'boolean', description: '`false`: counting stopped at `count`, a lower bound.' },
    groupsCount: { type: 'integer', minimum: 0, description: 'With `group_by`: groups in all (not only those answered).' },
    groupsCountIsExact: { type: 'boolean', description: '`false`: `groupsCount` is an estimate (more groups than answered).' },
    groupsAreExact: { type: 'boolean', description: 'With `group_by`: `true` when every group answered has its exact count and no group left out would rank among them, on any number of shards; `false` only for a field with more distinct values than one read can cover, with `groupsErrorBound`.' },
    groupsErrorBound: { type: 'integer', minimum: 0, description: 'With `groupsAreExact: false`: the most a count answered may be short of, and the most rows a group left out may hold.' },
    missing: { type: 'array', items: { type: 'string' }, description: 'With `id=`: the ids no row of the request matched (absent, or filtered out); first page only.' },
    facets: {
      type: 'object',
      description: 'With several `group_by` fields: per field, the rows its facet counted (under the other filters, not its own), its groups in all and whether that is exact.',
      additionalProperties: {
        type: 'object',
        properties: {
          count: { type: 'integer', minimum: 0 },
          groupsCount: { type: 'integer', minimum: 0 },
          groupsCountIsExact: { type: 'boolean' },
          groupsAreExact: { type: 'boolean' },
          groupsErrorBound: { type: 'integer', minimum: 0 },
        },
        required: ['count', 'groupsCount', 'groupsCountIsExact', 'groupsAreExact'],
        additionalProperties: false,
      },
    },
    from: { type: 'string', description: '`/v1/changes`, `/v1/memberships`: the bundle compared from.' },
    fromGeneratedAt: { type: ['string', 'null'], format: 'date-time', description: "`/v1/changes`, `/v1/memberships`: the `generatedAt` of `from`'s manifest." },
    to: { type: 'string', description: '`/v1/changes`, `/v1/memberships`: the bundle compared to.' },
    toGeneratedAt: { type: ['string', 'null'], format: 'date-time', description: "`/v1/changes`, `/v1/memberships`: the `generatedAt` of `to`'s manifest: what changed did so after `fromGeneratedAt` and by this instant." },
    indexedThrough: {
      type: 'string',
      format: 'date-time',
      description: 'Events and killmails: every row first held by a load up to this instant is in the generation this page was read from; never earlier than the `since_indexed` asked. Pass it as `since_indexed` on the next poll.',
    },
  },
  required: ['registry', 'apiVersion', 'count', 'countIsExact'],
  additionalProperties: false,
};

/** One group of a `group_by` answer. */
const GROUP: JsonSchema = {
  type: 'object',
  properties: {
    key: { type: ['string', 'integer', 'boolean', 'null'], description: 'The value; `null`: rows without one (`include_unknown=true`); a histogram bucket\'s first day.' },
    label: { type: ['string', 'null'], description: "The display label of the record an id key names (null when the registry has none), else the key as text." },
    count: { type: 'integer', minimum: 0 },
  },
  required: ['key', 'label', 'count'],
  additionalProperties: false,
};

/** Rows reduced by `select`: `id` and the fields asked for. */
const SELECTED = { type: 'array', items: { type: 'object', description: 'With `select`: the row reduced to `id` and the selected fields.' } };

/** What a list's `data` can be besides its rows: reduced rows (`select`), groups (`group_by`). */
interface Shapes {
  selectable: boolean;
  grouped: boolean;
  removable?: boolean;
}

/** `{data, meta}`; a page is `{data: [record…], meta, nextCursor?}`, its rows reduced by `select`, or its groups with `group_by`. */
function envelope(data: JsonSchema, paged: boolean, shapes: Shapes = { selectable: false, grouped: false }): JsonSchema {
  const rows = { type: 'array', items: data };
  const groups = { type: 'array', items: { $ref: '#/components/schemas/Group' } };
  const facets = { type: 'object', description: 'Several `group_by` fields: the groups of each, by field name.', additionalProperties: groups };
  // `include=removed`: the rows, and the tombstones of rows that left, in one order.
  const withRemoved = { type: 'array', items: { anyOf: [data, { $ref: '#/components/schemas/Tombstone' }] }, description: 'With `include=removed`: rows, and tombstones of the rows that left.' };
  const alternatives = [rows, ...(shapes.removable ? [withRemoved] : []), ...(shapes.selectable ? [SELECTED] : []), ...(shapes.grouped ? [groups, facets] : [])];
  const properties: Json = {
    data: paged ? (alternatives.length > 1 ? { anyOf: alternatives } : rows) : data,
    meta: { $ref: `#/components/schemas/${paged ? 'ListMeta' : 'Meta'}` },
  };
  if (paged) properties.nextCursor = { type: 'string', description: 'Present when more rows follow: the `cursor` of the next page.' };
  return { type: 'object', properties, required: ['data', 'meta'], additionalProperties: false };
}

const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

/** A list asked as a file (`format`, routes/download.ts). */
const FILE_CONTENT = {
  'text/csv': { schema: { type: 'string', description: 'RFC 4180: a header row, CRLF, UTF-8; nested values as JSON text.' } },
  'application/x-ndjson': { schema: { type: 'string', description: 'One row per line, as the JSON list answers it.' } },
};
const FILE_HEADERS = {
  'Content-Disposition': { description: 'With `format`: `attachment; filename="…"`, named after the route and its filters.', schema: { type: 'string' } },
  'X-Total-Count': { description: 'With `format`: the rows the file holds.', schema: { type: 'integer' } },
  'X-Truncated': { description: 'With `format`: `true` when more rows matched than the file holds (`DOWNLOAD_MAX_ROWS`).', schema: { type: 'string' } },
};

/** The 200 (and 206) answers of an operation. */
function successes(operation: Operation): Json {
  const { answer } = operation;
  switch (answer.kind) {
    case 'one':
    case 'list':
      const takes = (name: string) => operation.query.some((p) => p.name === name);
      const shapes = { selectable: takes('select'), grouped: takes('group_by'), removable: takes('include') };
      const content = json(envelope(answer.data, answer.kind === 'list', shapes));
      if (!takes('format')) return { 200: { description: 'OK', content } };
      return { 200: { description: 'OK; with `format`, the whole list as a file.', headers: FILE_HEADERS, content: { ...content, ...FILE_CONTENT } } };
    case 'bare':
      return { 200: { description: 'OK', content: json(answer.data) } };
    case 'stream':
      return { 200: { description: 'Server-Sent Events: `id: <resume token>`, `data: <one record, as the list route answers it>`, a blank line; `:` comment lines; before the rows of another bundle than the last one named (the headers name the first), `event: bundle` with `data: {"bundleId", "bundleGeneratedAt"}` and no `id`.', content: { 'text/event-stream': { schema: { type: 'string' }, 'x-event-data': answer.data } } } };
    case 'metrics':
      return { 200: { description: 'Prometheus text exposition.', content: { 'text/plain': { schema: { type: 'string' } } } } };
    case 'file': {
      // The bytes as published: JSON documents, NDJSON row files, gzip twins.
      const content = { 'application/json': {}, 'application/x-ndjson': {}, 'application/gzip': {} };
      const headers = {
        ETag: { description: 'The manifest sha256 of the bytes sent (`.gz` suffix for gzip bytes).', schema: { type: 'string' } },
        'Last-Modified': { description: "The bundle's generatedAt.", schema: { type: 'string' } },
      };
      return {
        200: { description: 'The file (gzip-encoded `.jsonl` only to clients that accept gzip).', headers, content },
        206: { description: 'One byte range of a file sent as stored (`Range`).', headers: { ...headers, 'Content-Range': { description: '`bytes <first>-<last>/<size>`.', schema: { type: 'string' } } }, content },
      };
    }
  }
}

const conditional = (operation: Operation) => operation.conditional ?? operation.readsIndex ?? true;

/** Every status an operation can answer, as response objects. */
function responses(operation: Operation, hasPathParameters: boolean): Json {
  const readsIndex = operation.readsIndex ?? true;
  const out: Json = successes(operation);
  if (conditional(operation)) out[304] = { description: 'Not modified: the conditional GET matched.' };
  const errors = [400];
  // `bundle=` names a bundle never loaded here (404) or no longer kept (410).
  const pins = operation.query.some((p) => p.name === 'bundle');
  if (hasPathParameters || operation.mayBeMissing || pins) errors.push(404);
  if (operation.mayBeGone || pins) errors.push(410);
  if (operation.answer.kind === 'file') errors.push(416);
  errors.push(429, 431, 500);
  if (readsIndex) errors.push(503, 504);
  for (const status of errors) out[status] = { $ref: `#/components/responses/${ERRORS[status]!.name}` };
  if (operation.answer.kind === 'one' && operation.answer.degraded) {
    // Ready answers 503 with its own data when no generation is live, or the error when ES is down.
    const degraded = envelope(operation.answer.data, false);
    out[503] = { description: 'Not ready.', headers: RETRY_AFTER, content: json({ anyOf: [degraded, { $ref: '#/components/schemas/Error503' }] }) };
  }
  for (const [status, response] of Object.entries(out) as [string, Json][]) {
    if (response.$ref !== undefined) continue;
    const read = readsIndex && (status === '200' || status === '206');
    response.headers = { ...(response.headers as Json | undefined), ...(read && BUNDLE_HEADERS), ...RATE_LIMIT_HEADERS };
  }
  return out;
}

function parameterObject(parameter: AnyParameter): Json {
  // A rule between parameters is said where a client generator reads: the description.
  const { excludes } = parameter;
  const description = excludes && !parameter.description.includes(`\`${excludes}\``) ? `${parameter.description} Not with \`${excludes}\`.` : parameter.description;
  return { name: parameter.name, in: parameter.in, required: parameter.required, description, schema: { ...parameter.schema } };
}

function operationId(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return method + (words.length ? words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('') : 'Root');
}

/** Path parameters a list row's `id` fills. */
const ROW_ID_PARAMETERS = ['id', 'idOrSlug'];

/**
 * Links from each list to its next page, and to the routes under one of its rows
 * (`/v1/killmails` → `/v1/killmails/{id}` and `/raw`; the first row's `id` fills the
 * parameter). Clients, and the fuzzer's stateful phase, follow them to real cursors and records.
 */
function addLinks(paths: Json): void {
  for (const [list, item] of Object.entries(paths) as [string, { get: Json }][]) {
    const ok = (item.get.responses as Json)[200] as Json;
    const data = ((ok.content as Json | undefined)?.['application/json'] as Json | undefined)?.schema as Json | undefined;
    if ((data?.properties as Json | undefined)?.nextCursor === undefined) continue;
    // The next page (`cursor` is bound to the other parameters: the same ones go with it).
    const self = item.get.operationId as string;
    const links: Json = { [`${self}NextPage`]: { operationId: self, parameters: { cursor: '$response.body#/nextCursor' }, description: 'The next page.' } };
    for (const [target, targetItem] of Object.entries(paths) as [string, { get: Json }][]) {
      const match = target.startsWith(`${list}/{`) ? /^\{(\w+)\}/.exec(target.slice(list.length + 1)) : null;
      if (!match || !ROW_ID_PARAMETERS.includes(match[1]!)) continue;
      const operationId = targetItem.get.operationId as string;
      links[operationId] = { operationId, parameters: { [match[1]!]: '$response.body#/data/0/id' }, description: `The first row's \`${target}\`.` };
    }
    ok.links = links;
  }
}

/** The OpenAPI 3.1 document of every route on the router. */
export function openApiDocument(router: AppRouter): Json {
  const paths: Json = {};
  for (const { layer, path, operation } of getRoutes(router)) {
    if (!operation) throw new Error(`${path} is not registered with its operation (routes/operation.ts)`);
    const pathParameters = layer.paramNames.map(({ name }) => PATH_PARAMETERS[name as keyof typeof PATH_PARAMETERS]);
    const headers = operation.headers ?? (conditional(operation) ? [IF_NONE_MATCH] : []);
    // An alias is said in its parameter's description (parameters.ts `aliasOf`).
    const parameters = [...pathParameters, ...operation.query.filter((p) => p.aliasOf === undefined), ...headers].map(parameterObject);
    const get = responses(operation, pathParameters.length > 0);
    const description = operation.description && { description: operation.description };
    paths[path] = { get: { operationId: operationId('get', path), tags: [tagOf(path)], summary: operation.summary, ...description, parameters, responses: get } };
  }
  addLinks(paths);
  const errorSchemas = Object.fromEntries(Object.entries(ERRORS).map(([status, { code }]) => [`Error${status}`, errorSchema(code)]));
  const errorResponses = Object.fromEntries(
    Object.entries(ERRORS).map(([status, { name, description }]) => [
      name,
      {
        description,
        headers: { ...((status === '503' || status === '429' || status === '504') && RETRY_AFTER), ...RATE_LIMIT_HEADERS },
        content: json({ $ref: `#/components/schemas/Error${status}` }),
      },
    ]),
  );
  return {
    openapi: '3.1.0',
    info: { title: 'Registry Query Gateway', version: 'v1', description: INFO_DESCRIPTION, license: { name: 'MIT', identifier: 'MIT' } },
    tags: TAGS.map(({ name, description }) => ({ name, description })),
    paths,
    components: { schemas: { Meta: META, ListMeta: LIST_META, Group: GROUP, ...SCHEMAS, ...errorSchemas }, responses: errorResponses },
  };
}

export function openApiRoutes(router: AppRouter, _deps: RouteDeps): void {
  // Written on first request, when every family has registered its routes; the router never changes after.
  let document: Json | undefined;
  const operation = {
    summary: 'This document: OpenAPI 3.1',
    query: [],
    answer: { kind: 'bare', data: { type: 'object', required: ['openapi', 'info', 'paths'] } },
    readsIndex: false,
  } as const;
  route(router, '/v1/openapi.json', operation, (ctx) => {
    document ??= openApiDocument(router);
    ctx.body = document;
  });
}
