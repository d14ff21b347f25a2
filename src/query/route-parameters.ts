/**
 * The gateway's parameters, declared once (see parameters.ts for what a declaration is and
 * the rules every query shares), and the parameter sets of the list routes.
 *
 * Choices where the reference was lenient: `limit` must be a positive integer, and values
 * above 200 count as 200 because the reference's explorer can send them; `npc` must be
 * exactly `true` or `false`; `q` is at most 200 characters. Unknown `environment`, `type`
 * and filter values are data, not errors: they match nothing.
 */
import { DEFAULT_DOWNLOAD_MAX_ROWS } from '../config.ts';
import { KILLMAIL_LABELS } from '../indices/killmail-labels.ts';
import { CHANGE_COLLECTIONS } from '../indices/all.ts';
import { ApiError } from '../errors.ts';
import { GAP_MINUTES } from '../indices/battle-kills.ts';
import { type Values, headerParameter, literalPattern, pathParameter, queryParameter } from './parameters.ts';
import { CHANGE_KINDS } from './changes.ts';
import { type TimeBound, toTimeBound } from './time-range.ts';
import { CYCLE, CYCLES, type CycleScope, scopeOf } from './scope.ts';

export const DEFAULT_LIMIT = 50;
/** Ids are at most Elasticsearch's 512-byte `_id` (longer ones are hashed) plus their prefix: a longer value is no identifier. */
export const MAX_RESOLVE_LENGTH = 600;
export const MAX_LIMIT = 200;
/** Longer queries are refused: nobody searches a registry with a paragraph. */
export const MAX_Q_LENGTH = 200;

export const ENVIRONMENT = queryParameter('environment', {
  description: "Environment (tenant) of the rows. Default: the gateway's `DEFAULT_ENVIRONMENT` (`stillness`). An unknown value matches nothing.",
  schema: { type: 'string', examples: ['stillness', 'utopia'] },
  expects: 'an environment name',
});

/** `/v1/ops/source-gaps` is not scoped: without `environment` it lists every environment's gaps. */
export const GAPS_ENVIRONMENT = queryParameter('environment', {
  description: 'Only the gaps of this environment. Default: every environment.',
  schema: { type: 'string', examples: ['stillness'] },
  expects: 'an environment name',
});

export const LIMIT = queryParameter('limit', {
  description: `Rows per page: a positive integer, default ${DEFAULT_LIMIT}; values above ${MAX_LIMIT} count as ${MAX_LIMIT}.`,
  schema: { type: 'integer', minimum: 1, default: DEFAULT_LIMIT },
  expects: `a positive integer (values above ${MAX_LIMIT} count as ${MAX_LIMIT})`,
  convert: (text) => Math.min(Number(text), MAX_LIMIT),
});

export const CURSOR = queryParameter('cursor', {
  description: 'The `nextCursor` of the previous page, unchanged (opaque; bound to the route and its other parameters).',
  schema: { type: 'string' },
  expects: 'a nextCursor',
});

/** A bundle id as the registry names bundles (the SHA-256 of a manifest, or a publish pointer's `bundleId`). */
export const BUNDLE_ID_PATTERN = '^[0-9A-Za-z._-]{1,128}$';
const BUNDLE_ID_EXPECTS = 'a bundle id (at most 128 letters, digits, `.`, `_` or `-`)';

/** `bundle=`: on every read route but the streams (src/routes/operation.ts adds it), the answer read from that kept bundle. */
export const BUNDLE = queryParameter('bundle', {
  description: 'Answer from this bundle (a `bundleId` of `/v1/bundles`) while it is kept, as it answered when it was live; cursors keep it. A bundle no longer kept is a 410 naming the oldest kept one; one never loaded here a 404.',
  schema: { type: 'string', pattern: BUNDLE_ID_PATTERN },
  expects: BUNDLE_ID_EXPECTS,
});

export const Q = queryParameter('q', {
  description: `Search text (never query syntax), at most ${MAX_Q_LENGTH} characters.`,
  schema: { type: 'string', maxLength: MAX_Q_LENGTH },
  expects: `text of at most ${MAX_Q_LENGTH} characters`,
});

/** `profile=known` hides registry placeholders (`Character 2112…`); `placeholder` shows only them. */
export type Profile = 'known' | 'placeholder';
const PROFILES: readonly Profile[] = ['known', 'placeholder'];

export const PROFILE = queryParameter('profile', {
  description: '`known`: only rows with a real name; `placeholder`: only registry placeholders (`Character 2112…`).',
  schema: { type: 'string', enum: PROFILES },
  expects: 'known or placeholder',
  convert: (text) => text as Profile,
});

/** Several values of an exact filter: `a|b` matches rows with either (OpenAlex's OR). */
export type AnyOf = readonly string[];

/**
 * One member of an OR list. Kept unambiguous — a member cannot hold the separator — so the
 * pattern runs in linear time on any input (`[^|]*[^|\s][^|]*`, "not blank", backtracked
 * exponentially over 100 members: a request could hang a worker). A blank member is refused by
 * `anyOf` with its own message.
 */
const MEMBER = '[^|]+';

/**
 * An exact-match filter on a text field: one value, or several separated by `|` (OR). Members
 * are trimmed; an empty one is a 400. An unknown value matches nothing.
 */
export const exactFilter = <const Name extends string>(name: Name, description: string, examples?: string[]) =>
  queryParameter(name, {
    description: `${description} Several values separated by \`|\` match any of them.`,
    schema: { type: 'string', pattern: `^${MEMBER}(?:\\|${MEMBER}){0,${MAX_ANY_OF - 1}}$`, ...(examples && { examples }) },
    expects: `a value, or at most ${MAX_ANY_OF} separated by | (none of them empty)`,
    convert: (text): AnyOf => anyOf(name, text),
  });

/** Values an OR list (`a|b|…`, `id=`) may hold; more is a 400 naming the parameter and the cap. */
export const MAX_ANY_OF = 100;

/** `a|b` → its distinct trimmed members; an empty member, or more than MAX_ANY_OF, is a 400 naming the parameter. */
export function anyOf(name: string, text: string): AnyOf {
  const members = text.split('|').map((member) => member.trim());
  if (members.some((member) => member === '')) throw ApiError.badParameter(name, `${name} has an empty value between "|" separators.`);
  const distinct = [...new Set(members)];
  if (distinct.length > MAX_ANY_OF) throw ApiError.badParameter(name, `${name} lists ${distinct.length} values; at most ${MAX_ANY_OF}.`);
  return distinct;
}

export const TYPE = exactFilter('type', 'Entity type (exact), e.g. `character`, `system`; same as `entityType` (give one, or both equal).', ['character', 'system']);
export const ENTITY_TYPE = exactFilter('entityType', 'Entity type (exact); same as `type`.', ['character', 'system']);

export const EVENT_KIND = exactFilter('kind', 'Event kind (exact), e.g. `character.created`.', ['character.created', 'killmail.created']);
export const MODULE = exactFilter('module', 'Move module (exact), e.g. `killmail`.');
export const PACKAGE_ID = exactFilter('package_id', 'Package id (exact).');
export const TRANSACTION_DIGEST = exactFilter('transaction_digest', 'Transaction digest (exact).');
export const SOURCE_ID = exactFilter('source_id', 'Source id (exact).');

/** `id=a|b|c`: many records in one call (OpenAlex's most-requested batch lookup). */
export const IDS = exactFilter(
  'id',
  `Only these records, up to ${MAX_ANY_OF} ids separated by \`|\` (on entity lists ids or slugs), in the list's own order; ids no row of this request matches (absent, or filtered out) are listed in \`meta.missing\` on the first page. Combines with every other filter (AND).`,
  ['character:stillness:2112000041', 'character:stillness:2112000041|system:stillness:30000142'],
);

export const INVOLVED = exactFilter('involved', 'Killmails an entity took part in: as the victim, a killer or the reporter (entity ids; several with `|`).', ['character:stillness:2112000041']);
export const SIDE = queryParameter('side', {
  description: 'With `involved`: `kills` (it was a killer) or `losses` (it was the victim). Without `involved`: a 400.',
  schema: { type: 'string', enum: ['kills', 'losses'] },
  expects: 'kills or losses',
  convert: (text) => text as 'kills' | 'losses',
});

export const GAP = queryParameter('gap', {
  description: `Battles: the most minutes between one killmail of a system and the next for both to be in one battle, ${GAP_MINUTES.min} to ${GAP_MINUTES.max}. Default: ${GAP_MINUTES.default}.`,
  schema: { type: 'integer', minimum: GAP_MINUTES.min, maximum: GAP_MINUTES.max, default: GAP_MINUTES.default },
  expects: `a whole number of minutes from ${GAP_MINUTES.min} to ${GAP_MINUTES.max}`,
  convert: Number,
});

export const SYSTEM = exactFilter('system', 'System entity id of the kill.');
export const VICTIM = exactFilter('victim', 'Victim character id.');
export const KILLER = exactFilter('killer', "Killer: a character id, an NPC type id or the killer's entity id.");
export const REPORTER = exactFilter('reporter', 'Reporter character id.');
export const NPC = queryParameter('npc', {
  description: '`true`: kills by NPCs only; `false`: the others.',
  schema: { type: 'boolean' },
  expects: 'true or false',
  convert: (text) => text === 'true',
});

const LABEL_ALTERNATIVES = KILLMAIL_LABELS.join('|');
export const LABEL = queryParameter('label', {
  description: `Killmails with this label: \`${KILLMAIL_LABELS.join('`, `')}\` (what each means: the Killmail record's \`labels\`). Several separated by \`|\` match any of them.`,
  schema: { type: 'string', pattern: `^(?:${LABEL_ALTERNATIVES})(?:\\|(?:${LABEL_ALTERNATIVES}))*$`, examples: ['npc', 'same_tribe|structure'] },
  expects: `${KILLMAIL_LABELS.join(', ')}, or several of them separated by |`,
  convert: (text): AnyOf => anyOf('label', text),
});

/**
 * `exclude=a,b`: killmails with none of these labels — rankings and counts without the kills a
 * label marks. Comma- or `|`-separated (there is no "any" to say: each label named is left out).
 * A label both asked (`label`) and left out is a 400.
 */
export const EXCLUDE = queryParameter('exclude', {
  description: `Killmails with none of these labels: any of \`${KILLMAIL_LABELS.join('`, `')}\`, separated by \`,\` or \`|\`. Not a label \`label\` asks for.`,
  schema: { type: 'string', pattern: `^(?:${LABEL_ALTERNATIVES})(?:[,|](?:${LABEL_ALTERNATIVES}))*$`, examples: ['npc', 'npc,structure'] },
  expects: `${KILLMAIL_LABELS.join(', ')}, or several of them separated by , or |`,
  convert: (text): AnyOf => anyOf('exclude', text.replace(/,/g, '|')),
});

/** A 400 when `exclude` leaves out a label `label` asks for: the answer would be those killmails and none. */
export function refuseExcludedLabel(label: AnyOf | undefined, exclude: AnyOf | undefined): void {
  const both = label?.filter((l) => exclude?.includes(l)) ?? [];
  if (both.length > 0) throw ApiError.badParameter('exclude', `exclude leaves out ${both.join(', ')}, which label asks for: name each label in one of them.`);
}

export const SOURCE_KIND = exactFilter('kind', 'Source kind (exact), e.g. `static_client_data`.', ['static_client_data']);

/** The registry's confidence labels (export format, section 4). */
export const CONFIDENCE_LABELS = ['verified', 'probable', 'reported', 'stale', 'unknown'] as const;
const LABELS = CONFIDENCE_LABELS.join('|');

export const CONFIDENCE = queryParameter('confidence', {
  description: `Only facts of these confidence labels: one of \`${CONFIDENCE_LABELS.join('`, `')}\`, or several separated by \`|\`.`,
  schema: { type: 'string', pattern: `^(?:${LABELS})(?:\\|(?:${LABELS}))*$`, examples: ['verified', 'verified|probable'] },
  expects: `${CONFIDENCE_LABELS.join(', ')}, or several of them separated by |`,
  convert: (text): AnyOf => anyOf('confidence', text),
});

const instantWords = (bound: string) =>
  `an ISO 8601 instant with a zone (\`2026-06-01T00:00:00Z\`, \`2026-06-01T09:30:00.123456789+02:00\`; any number of fraction digits), compared as an instant: ${bound}`;
const INSTANT_SCHEMA = {
  type: 'string',
  // As src/time/instant.ts reads one (a day past its month's end, as 02-30, is still a 400);
  // digits past the nanosecond place an instant between two nanoseconds (time-range.ts).
  pattern: '^[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:[.][0-9]+)?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])$',
} as const;

export const SINCE = queryParameter('since', {
  description: `Only rows at or after this time: ${instantWords('inclusive')}.`,
  schema: { ...INSTANT_SCHEMA, examples: ['2026-06-01T00:00:00Z'] },
  expects: 'an ISO 8601 instant with a zone, e.g. 2026-06-01T00:00:00Z',
  convert: (text): TimeBound => toTimeBound('since', text),
});

export const UNTIL = queryParameter('until', {
  description: `Only rows before this time: ${instantWords('exclusive')}. At or after \`since\` when both are given (else a 400).`,
  schema: { ...INSTANT_SCHEMA, examples: ['2026-07-01T00:00:00Z'] },
  expects: 'an ISO 8601 instant with a zone, e.g. 2026-07-01T00:00:00Z',
  convert: (text): TimeBound => toTimeBound('until', text),
});

export const SINCE_INDEXED = queryParameter('since_indexed', {
  description:
    'Only rows that became visible through this API after this instant (exclusive): rows first held by a later load. A poll passes the `meta.indexedThrough` of its last complete walk (README: following new rows); ' +
    instantWords('compared with each row\'s first-seen instant, which no later load changes') + '.',
  schema: { ...INSTANT_SCHEMA, examples: ['2026-06-30T05:10:00Z'] },
  expects: 'an ISO 8601 instant with a zone, e.g. 2026-06-30T05:10:00Z',
  convert: (text): TimeBound => toTimeBound('since_indexed', text),
});

export const UPDATED_SINCE = queryParameter('updated_since', {
  description: `Only entities whose \`updatedAt\` is at or after this time (rows without one are left out): ${instantWords('inclusive')}.`,
  schema: { ...INSTANT_SCHEMA, examples: ['2026-06-01T00:00:00Z'] },
  expects: 'an ISO 8601 instant with a zone, e.g. 2026-06-01T00:00:00Z',
  convert: (text): TimeBound => toTimeBound('updated_since', text),
});

export const INCLUDE = queryParameter('include', {
  description:
    '`removed`: a mirror\'s walk. Adds the rows that left the registry as `{id, removed: true, removedAt}`, and a row that changed again as it is now, each where it became visible (`indexedAt` = `removedAt`, the instant of the load that removed or changed it), in the same order as the rows, under the same filters; kept `TOMBSTONE_DAYS`. Not with `group_by`.',
  schema: { type: 'string', enum: ['removed'] },
  expects: 'removed',
  excludes: 'group_by',
  convert: () => 'removed' as const,
});

export const FORMAT = queryParameter('format', {
  description:
    `The whole filtered list as a file instead of a page: \`csv\` (RFC 4180, a header row, CRLF; columns those of \`select\`, else every field of the route's records; nested values as JSON text) or \`ndjson\` (one row per line, as the JSON list's rows). ` +
    `Every matching row in the list's order, at most ${DEFAULT_DOWNLOAD_MAX_ROWS.toLocaleString('en')} (\`DOWNLOAD_MAX_ROWS\`; \`X-Total-Count\`: the rows the file holds; \`X-Truncated: true\` when more matched); \`cursor\` and \`limit\` do not apply. Limited like \`/v1/exports\`: by downloads in flight per client. Not with \`group_by\`.`,
  schema: { type: 'string', enum: ['csv', 'ndjson'] },
  expects: 'csv or ndjson',
  excludes: 'group_by',
  convert: (text) => text as 'csv' | 'ndjson',
});

export const INCLUDE_UNKNOWN = queryParameter('include_unknown', {
  description: 'With `group_by`: `true` adds one group (`key: null`) for the rows without a value.',
  schema: { type: 'boolean' },
  expects: 'true or false',
  convert: (text) => text === 'true',
});

/**
 * `sort` of a route: one of a small documented set of orders (`default` says which applies
 * without it). A cursor is bound to the order it was issued for.
 */
export function sortParameter<const Order extends string>(orders: readonly Order[], defaultWords: string) {
  return queryParameter('sort', {
    description: `Order of the rows: \`${orders.join('`, `')}\`. Default: ${defaultWords}.`,
    schema: { type: 'string', enum: orders },
    expects: `one of: ${orders.join(', ')}`,
    convert: (text) => text as Order,
  });
}

/** The order a cursor binds: left out when it is the route's default, so default-order cursors stay as they were. */
export function boundSort<Order extends string>(sort: Order | undefined, defaultSort: Order): Order | undefined {
  return sort === defaultSort ? undefined : sort;
}

/** The parameters of every scoped list route, in validation order. */
export const LIST = [ENVIRONMENT, CYCLES, CYCLE, LIMIT, CURSOR] as const;

/** What every scoped list shares. */
export interface ListParams {
  environment: string;
  scope: CycleScope;
  limit: number;
  cursor: string | undefined;
}

/** The shared list values, with the environment's default and the cycle scope resolved. */
export function listParams(values: Values<typeof LIST>, defaultEnvironment: string): ListParams {
  return { environment: values.environment ?? defaultEnvironment, scope: scopeOf(values), limit: values.limit ?? DEFAULT_LIMIT, cursor: values.cursor };
}

/** Path parameters by name: every `:name` in a route is one of these. */
export const PATH_PARAMETERS = {
  idOrSlug: pathParameter('idOrSlug', {
    description: 'Entity id (`system:stillness:30000142`) or slug (`system-30000142-stillness`).',
    schema: { type: 'string', examples: ['character:stillness:2112000041', 'character-2112000041-stillness'] },
    expects: 'an id or slug',
  }),
  id: pathParameter('id', { description: 'Record id, as exported.', schema: { type: 'string' }, expects: 'an id' }),
  value: pathParameter('value', {
    description: `Any identifier: an entity id or slug, a character's address (\`0x…\`), a killmail id, an event id or transaction digest, a source id, an artefact id or sha256, a chain object id or object id. At most ${MAX_RESOLVE_LENGTH} characters, no spaces.`,
    schema: { type: 'string', maxLength: MAX_RESOLVE_LENGTH, pattern: '^\\S+$', examples: ['character:stillness:2112000007'] },
    expects: `an identifier (at most ${MAX_RESOLVE_LENGTH} characters, no spaces)`,
  }),
  bundleId: pathParameter('bundleId', { description: 'A bundle id, as `/v1/bundles` lists them.', schema: { type: 'string', pattern: BUNDLE_ID_PATTERN }, expects: BUNDLE_ID_EXPECTS }),
  typeId: pathParameter('typeId', { description: 'Numeric static type id (the `<n>` of ids ending in `:type:<n>`).', schema: { type: 'string', examples: ['77800'] }, expects: 'a type id' }),
  file: pathParameter('file', {
    description:
      'A bundle file: `manifest.json`, `catalog.json`, the four `ops_*.json` documents, the `.jsonl` row files and the `.jsonl.gz` twins of those published gzipped. Any other name is 404.',
    schema: { type: 'string', examples: ['manifest.json', 'catalog.json', 'entities.jsonl', 'killmails.jsonl', 'entities.jsonl.gz', 'ops_freshness.json'] },
    expects: 'a bundle file name',
  }),
} as const;

/** Request headers of conditional GETs: the JSON reads (weak ETags) and the exports (strong ETags). */
export const IF_NONE_MATCH = headerParameter('If-None-Match', { description: 'ETags the client holds: a match answers 304.', schema: { type: 'string' }, expects: 'entity tags' });

/** Request headers the exports read besides `If-None-Match`. */
export const EXPORT_HEADERS = [
  IF_NONE_MATCH,
  headerParameter('If-Modified-Since', { description: 'An HTTP date: not modified since then answers 304.', schema: { type: 'string' }, expects: 'an HTTP date' }),
  headerParameter('Range', {
    description:
      'One byte range (`bytes=0-99`, `bytes=100-`, `bytes=-100`) of a file sent as stored; ignored (the whole file) when malformed or multiple, and for a `.jsonl` sent gzip-encoded or decompressed.',
    schema: { type: 'string', examples: ['bytes=0-99', 'bytes=-100'] },
    expects: 'a byte range',
  }),
  headerParameter('If-Range', { description: 'The ETag the range must still match; otherwise the whole file is sent.', schema: { type: 'string' }, expects: 'an entity tag' }),
  headerParameter('Accept-Encoding', {
    description: 'A `.jsonl` published only gzipped is sent as gzip (`Content-Encoding: gzip`) to clients that accept it, else decompressed.',
    schema: { type: 'string', examples: ['gzip', 'identity'] },
    expects: 'content codings',
  }),
] as const;

/** `/v1/changes`: the two bundles compared. */
export const FROM_BUNDLE = queryParameter('from', {
  description: 'The bundle compared from (a kept `bundleId` of `/v1/bundles`). Default: the bundle kept before `to`.',
  schema: { type: 'string', pattern: BUNDLE_ID_PATTERN },
  expects: BUNDLE_ID_EXPECTS,
});

export const TO_BUNDLE = queryParameter('to', {
  description: 'The bundle compared to (a kept `bundleId`, loaded after `from`). Default: the live bundle.',
  schema: { type: 'string', pattern: BUNDLE_ID_PATTERN },
  expects: BUNDLE_ID_EXPECTS,
});

/** A `|` list of names from a closed set: each member one of `names` (a 400 naming the parameter otherwise). */
const namesOf = <const Name extends string, const N extends string>(name: Name, names: readonly N[], description: string) => {
  const one = `(?:${names.map(literalPattern).join('|')})`;
  return queryParameter(name, {
    description: `${description} One of ${names.map((n) => `\`${n}\``).join(', ')}; several separated by \`|\`.`,
    schema: { type: 'string', pattern: `^${one}(?:\\|${one})*$` },
    expects: `${names.join(', ')}, or several of them separated by |`,
    convert: (text) => [...new Set(text.split('|'))] as N[],
  });
};

export const CHANGE_COLLECTION = namesOf('collection', CHANGE_COLLECTIONS, 'Only the changes of these collections (index names: `facts`, `relations`, …).');
export const CHANGE = namesOf('change', CHANGE_KINDS, 'Only changes of these kinds.');

export const TRIBE = exactFilter('tribe', 'Only the memberships of these tribes (entity ids).', ['tribe:stillness:98000001']);
export const CHARACTER = exactFilter('character', 'Only the memberships of these characters (entity ids).', ['character:stillness:2112000041']);
