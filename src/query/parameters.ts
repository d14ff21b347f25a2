/**
 * Declared parameters: the one description of each query and path parameter (name, JSON
 * Schema of its value, words, whether it is required) that both the edge validates with
 * and the OpenAPI document is written from, so a parameter cannot be documented one way
 * and validated another. A value is checked against its own schema (`type`, `enum`,
 * `pattern`, `minimum`, `maxLength`), then converted.
 *
 * Query rules shared by every route (the reference was lenient: its weak point 1): unknown
 * and repeated parameters are a 400 naming the parameter; values are trimmed and an empty
 * value counts as absent, as the reference's explorer sends empty ones. Rules between
 * parameters beyond `excludes` (e.g. `type` vs `entityType`) stay with the route that has them.
 *
 * Pure: no Koa; routes hand in `ctx.query`.
 */
import { ApiError } from '../errors.ts';

/** The query as Koa parses it: a repeated name gives an array. */
export type RawQuery = Record<string, string | string[] | undefined>;

/** JSON Schema of a parameter value, as OpenAPI 3.1 prints it: the keywords the gateway checks. */
export interface ValueSchema {
  readonly type: 'string' | 'integer' | 'boolean';
  readonly enum?: readonly string[];
  /** Anchored ECMA-262 pattern of the trimmed value. */
  readonly pattern?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  /** In characters (code points), as JSON Schema counts them. */
  readonly maxLength?: number;
  /** Documentation only: what an absent value means. */
  readonly default?: string | number;
  /** Documentation only: values worth trying (the fuzzer starts from them). */
  readonly examples?: readonly string[];
}

/** One declared parameter: what the edge validates and the OpenAPI document prints. */
export interface Parameter<Name extends string = string, Value = unknown> {
  readonly name: Name;
  readonly in: 'query' | 'path' | 'header';
  readonly description: string;
  readonly schema: ValueSchema;
  /** Path parameters always are; query and header parameters never are. */
  readonly required: boolean;
  /** A valid value in words, completing "`<name>` must be …" in error messages. */
  readonly expects: string;
  /** A parameter that may not be given together with this one (the 400 names this one). */
  readonly excludes?: string;
  /**
   * Another spelling of that parameter (`cycle` of `cycles`, the reference's): accepted, never
   * together with it, and said in its description rather than listed in the OpenAPI document —
   * where generated requests would give both and be refused.
   */
  readonly aliasOf?: string;
  /** Valid trimmed text → the value handlers get. */
  readonly convert: (text: string) => Value;
}

/** A parameter of any name and value (lists of declarations). */
export type AnyParameter = Parameter<string, unknown>;

/** What a handler receives: each declared query parameter's converted value, undefined when absent. */
export type Values<Ps extends readonly AnyParameter[]> = {
  [P in Ps[number] as P['name']]?: P extends Parameter<string, infer V> ? V : never;
};

type Options<Value> = { description: string; schema: ValueSchema; expects: string; excludes?: string; aliasOf?: string; convert?: (text: string) => Value };

/** A query parameter; without `convert` its value is the trimmed text. */
export function queryParameter<const Name extends string, Value = string>(name: Name, options: Options<Value>): Parameter<Name, Value> {
  const convert = options.convert ?? ((text: string) => text as Value);
  return Object.freeze({ name, in: 'query', required: false, ...options, convert });
}

/** A path parameter (`:name` in a route): required, taken as the router decoded it. */
export function pathParameter<const Name extends string>(name: Name, options: Omit<Options<string>, 'convert' | 'excludes'>): Parameter<Name, string> {
  return Object.freeze({ name, in: 'path', required: true, ...options, convert: (text: string) => text });
}

/** A request header a route reads (conditional and range requests): documented, taken as sent. */
export function headerParameter<const Name extends string>(name: Name, options: Omit<Options<string>, 'convert' | 'excludes'>): Parameter<Name, string> {
  return Object.freeze({ name, in: 'header', required: false, ...options, convert: (text: string) => text });
}

/** A literal as a pattern's alternative (the names a parameter accepts, in its schema's pattern). */
export const literalPattern = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const patterns = new Map<string, RegExp>();
function matches(pattern: string, text: string): boolean {
  let regexp = patterns.get(pattern);
  if (!regexp) patterns.set(pattern, (regexp = new RegExp(pattern, 'u')));
  return regexp.test(text);
}

/** Whether a trimmed, non-empty text is a value of the schema. */
export function conforms(schema: ValueSchema, text: string): boolean {
  switch (schema.type) {
    case 'integer': {
      if (!/^-?[0-9]+$/.test(text)) return false;
      return (schema.minimum === undefined || Number(text) >= schema.minimum) && (schema.maximum === undefined || Number(text) <= schema.maximum);
    }
    case 'boolean':
      return text === 'true' || text === 'false';
    case 'string':
      if (schema.enum !== undefined && !schema.enum.includes(text)) return false;
      if (schema.pattern !== undefined && !matches(schema.pattern, text)) return false;
      // Characters, not UTF-16 units: 200 emoji are 200 characters.
      return schema.maxLength === undefined || [...text].length <= schema.maxLength;
  }
}

/** Echoes of a bad value are kept short: an error message is not a mirror. */
function quoted(raw: string): string {
  const chars = [...raw];
  return JSON.stringify(chars.length > 64 ? `${chars.slice(0, 64).join('')}…` : raw);
}

/** One raw value → its converted value (undefined when absent or blank), or a 400 naming the parameter. */
export function readValue<Value>(parameter: Parameter<string, Value>, raw: string | undefined): Value | undefined {
  const text = raw?.trim();
  if (!text) return undefined;
  if (!conforms(parameter.schema, text)) {
    throw ApiError.badParameter(parameter.name, `${parameter.name} must be ${parameter.expects}, got ${quoted(raw!)}.`);
  }
  return parameter.convert(text);
}

/** A route's query parameters and their names, worked out once per declaration (every request reads them). */
const QUERY_PARAMETERS = new WeakMap<readonly AnyParameter[], { declared: readonly AnyParameter[]; names: ReadonlySet<string> }>();

function queryParametersOf(parameters: readonly AnyParameter[]): { declared: readonly AnyParameter[]; names: ReadonlySet<string> } {
  let known = QUERY_PARAMETERS.get(parameters);
  if (!known) {
    const declared = parameters.filter((p) => p.in === 'query');
    QUERY_PARAMETERS.set(parameters, (known = { declared, names: new Set(declared.map((p) => p.name)) }));
  }
  return known;
}

/**
 * The query string of a route → its declared parameters' values. Unknown or repeated names
 * first (in query order), then `excludes` pairs, then each value in declaration order.
 */
export function readQuery<const Ps extends readonly AnyParameter[]>(query: RawQuery, parameters: Ps): Values<Ps> {
  const { declared, names } = queryParametersOf(parameters);
  for (const [name, value] of Object.entries(query)) {
    if (!names.has(name)) {
      const hint = names.size ? ` Accepted here: ${[...names].join(', ')}.` : ' This route takes no parameters.';
      throw ApiError.badParameter(name, `Unknown parameter "${name}".${hint}`);
    }
    if (Array.isArray(value)) throw ApiError.badParameter(name, `Parameter "${name}" is given more than once.`);
  }
  const given = (name: string) => Boolean((query[name] as string | undefined)?.trim());
  for (const p of declared) {
    if (p.excludes !== undefined && given(p.name) && given(p.excludes)) {
      throw ApiError.badParameter(p.name, `Give either ${p.name} or ${p.excludes}, not both.`);
    }
  }
  const values: Record<string, unknown> = {};
  for (const p of declared) values[p.name] = readValue(p, query[p.name] as string | undefined);
  return values as Values<Ps>;
}
