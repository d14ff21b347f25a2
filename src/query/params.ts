/**
 * Query parameters at the edge: each route names the parameters it accepts, and this module
 * turns the raw query string into typed values or a 400 that names the parameter. Handlers
 * never read `ctx.query` themselves.
 *
 * Choices where the reference was lenient (its weak point 1): unknown and repeated parameters
 * are refused; `limit` must be a positive integer, and values above 200 are clamped to 200
 * because the reference's explorer can send them; `npc` must be `true` or `false`.
 * Unknown `environment` values are data, not errors: they match nothing.
 */
import { ApiError } from '../errors.ts';
import { type CycleScope, parseCycleScope } from './scope.ts';

export type RawQuery = Record<string, string | string[] | undefined>;
export type Params = Record<string, string | undefined>;

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;
/** Longer queries are refused: nobody searches a registry with a paragraph. */
export const MAX_Q_LENGTH = 200;

/** Keeps the accepted parameters as single strings; refuses unknown or repeated ones. */
export function takeParams(query: RawQuery, accepted: readonly string[]): Params {
  const params: Params = {};
  for (const [name, value] of Object.entries(query)) {
    if (!accepted.includes(name)) {
      const hint = accepted.length ? ` Accepted here: ${accepted.join(', ')}.` : ' This route takes no parameters.';
      throw ApiError.badParameter(name, `Unknown parameter "${name}".${hint}`);
    }
    if (Array.isArray(value)) throw ApiError.badParameter(name, `Parameter "${name}" is given more than once.`);
    params[name] = value;
  }
  return params;
}

/** A non-empty trimmed value, or undefined for absent and empty. */
export function text(params: Params, name: string): string | undefined {
  const value = params[name]?.trim();
  return value ? value : undefined;
}

export function parseLimit(raw: string | undefined): number {
  const value = raw?.trim();
  if (value === undefined || value === '') return DEFAULT_LIMIT;
  if (!/^\d+$/.test(value) || Number(value) < 1) {
    throw ApiError.badParameter('limit', `limit must be a positive integer (at most ${MAX_LIMIT}), got "${raw}".`);
  }
  return Math.min(Number(value), MAX_LIMIT);
}

export function parseBoolean(name: string, raw: string | undefined): boolean | undefined {
  const value = raw?.trim();
  if (value === undefined || value === '') return undefined;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw ApiError.badParameter(name, `${name} must be true or false, got "${raw}".`);
}

/** The search text; absent or blank means no search (`/v1/search` then lists, as the reference does). */
export function parseQ(raw: string | undefined): string | undefined {
  const value = raw?.trim();
  if (!value) return undefined;
  // Characters, not UTF-16 units: 200 emoji are 200 characters.
  if ([...value].length > MAX_Q_LENGTH) throw ApiError.badParameter('q', `q must be at most ${MAX_Q_LENGTH} characters.`);
  return value;
}

/** What every scoped list shares. */
export interface ListParams {
  environment: string;
  scope: CycleScope;
  limit: number;
  cursor: string | undefined;
}

/** The parameters of every scoped list route. */
export const LIST_PARAMS = ['environment', 'cycles', 'cycle', 'limit', 'cursor'] as const;

export function parseListParams(params: Params, defaultEnvironment: string): ListParams {
  return {
    environment: text(params, 'environment') ?? defaultEnvironment,
    scope: parseCycleScope(params.cycles, params.cycle),
    limit: parseLimit(params.limit),
    cursor: text(params, 'cursor'),
  };
}

/** `profile=known` hides registry placeholders (`Character 2112…`); `placeholder` shows only them. */
export type Profile = 'known' | 'placeholder';

export function parseProfile(raw: string | undefined): Profile | undefined {
  const value = raw?.trim();
  if (!value) return undefined;
  if (value === 'known' || value === 'placeholder') return value;
  throw ApiError.badParameter('profile', `profile must be known or placeholder, got "${raw}".`);
}
