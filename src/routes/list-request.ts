/**
 * What a list route asks of the list machinery (list.ts picks a page, groups or a download):
 * the route and the filters its cursor binds, the index, and the list's query — the pure
 * builder's own (src/query), never a body built only to take a part of it.
 */
import type { IndexName } from '../indices/all.ts';
import type { Row } from '../indices/description.ts';
import type { GenerationDoc } from '../indices/generation.ts';
import { ApiError } from '../errors.ts';
import type { Meta } from '../http/envelope.ts';
import type { Count } from '../query/cursor.ts';
import { type Grouping, MAX_GROUPS } from '../query/groups.ts';
import type { ListQuery } from '../query/list.ts';
import type { TotalHits } from '../search/raw-hits.ts';
import type { Reader } from '../search/search-service.ts';

/** `group_by` as a list route received it: one grouping, or several facets. */
export interface GroupRequest {
  by: Grouping[];
  includeUnknown: boolean;
  /** Groups answered at most: `limit`, else `MAX_GROUPS`. */
  limit: number;
}

/** The `group_by` request of a route's parameters, if it has one. */
export function groupRequest(params: { group_by?: Grouping[]; include_unknown?: boolean; limit?: number }): GroupRequest | undefined {
  return params.group_by && { by: params.group_by, includeUnknown: params.include_unknown ?? false, limit: params.limit ?? MAX_GROUPS };
}

export interface ListRequest<Source = { row: Row }> {
  /** Route pattern, e.g. `/v1/entities`. */
  route: string;
  /** Every parameter that shapes the result (not `cursor`, `limit`, `select`): binds the cursor. */
  bind: Record<string, unknown>;
  cursor: string | undefined;
  limit: number;
  index: IndexName;
  /**
   * The list's query on the generation read (its current cycle; a cursor's generation may be an
   * older one than the live): pages, groups and downloads are built from it, after the reader is chosen.
   */
  query(generation: GenerationDoc): ListQuery;
  /** Hit → record, for routes that reshape rows; without it rows are passed through verbatim. */
  toRecord?(source: Source): unknown;
  /** The records of a page of rows, read with more searches (battles: each start → its battle); pages and files alike. */
  expand?(reader: Reader, rows: Row[]): Promise<Row[]>;
  /** Rows counted exactly up to this many, a lower bound beyond (default: always exactly). */
  countUpTo?: number;
  /** `select`: only these top-level fields of each row (and `id`). */
  select?: readonly string[];
  /** `group_by`: the groups of the matching rows instead of rows. */
  groups?: GroupRequest;
  /** `id=a|b`: the ids asked for, and the indexed fields a row answers them by (entities: `id` and `slug`); the first page lists those no row matches in `meta.missing`. */
  ids?: { asked: readonly string[]; fields: readonly string[] };
  /** `include=removed`: the index's changes too, in the same order (the query keeps them to its generation: `throughGeneration`). */
  withChanges?: boolean;
  /** `format=csv|ndjson`: the whole list as a file (download.ts). */
  format?: 'csv' | 'ndjson';
  /** A CSV's columns without `select`: the fields of the route's records. */
  columns?: readonly string[];
  /** More `meta` of a page, from the generation it was read from. */
  meta?(generation: GenerationDoc): Record<string, unknown>;
}

/** `meta` of a list answer. */
export interface ListMeta extends Meta {
  count: number;
  countIsExact: boolean;
}

/** The count a search answered (it always answers one when asked to track). */
export function countOf(total: TotalHits | number | undefined): Count {
  if (typeof total === 'number') return { value: total, exact: true };
  if (total === undefined) throw ApiError.internal();
  return { value: total.value, exact: total.relation === 'eq' };
}

export const listMeta = (meta: Meta, count: Count, more?: Record<string, unknown>): ListMeta => ({ ...meta, count: count.value, countIsExact: count.exact, ...more });

