/** The response envelope every JSON route shares: `{data, meta, nextCursor?}` and `{error, meta}`. */
import type { ApiError } from '../errors.ts';

export interface Meta {
  registry: string;
  apiVersion: 'v1';
}

export function createMeta(registry: string): Meta {
  return Object.freeze({ registry, apiVersion: 'v1' });
}

export interface Envelope<T> {
  data: T;
  meta: Meta;
  nextCursor?: string;
}

/** Key order as the reference writes it: data, meta, nextCursor (omitted on the last page). */
export function toEnvelope<T>(data: T, meta: Meta, nextCursor?: string): Envelope<T> {
  return nextCursor === undefined ? { data, meta } : { data, meta, nextCursor };
}

export function toErrorBody(error: ApiError, meta: Meta) {
  const { code, message, details } = error;
  return { error: details === undefined ? { code, message } : { code, message, details }, meta };
}
