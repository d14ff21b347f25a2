/**
 * Events and killmails as request bodies: newest first by `occurredAt` (a `date_nanos`
 * instant, so `…:05.1Z` and `…:05.10000Z` compare as the same time, unlike the reference's
 * text comparison), ties by id descending; cycle-scoped; exact filters on indexed ids.
 */
import { events, killmails } from '../indices/timeline.ts';
import type { SortValue } from './cursor.ts';
import { type Query, type SearchBody, environmentScope, term, toListBody, toSort } from './list.ts';
import type { CycleScope } from './scope.ts';
import { toTokensFilter } from './search.ts';

interface TimelineParams {
  environment: string;
  scope: CycleScope;
  limit: number;
  q?: string;
}

export interface EventListParams extends TimelineParams {
  kind?: string;
  module?: string;
  packageId?: string;
  transactionDigest?: string;
  sourceId?: string;
}

export interface KillmailListParams extends TimelineParams {
  system?: string;
  victim?: string;
  /** A killer character id, an NPC killer type id or the killer's entity id. */
  killer?: string;
  reporter?: string;
  npc?: boolean;
}

const EVENT_SORT = toSort(events, events.sort);
const KILLMAIL_SORT = toSort(killmails, killmails.sort);

function scoped(params: TimelineParams, currentCycle: number): Query[] {
  const filter = environmentScope(params.environment, params.scope, currentCycle);
  if (params.q !== undefined) filter.push(toTokensFilter(params.q));
  return filter;
}

/** Exact-match filters for the parameters that are set, as `field → value`. */
function exact(pairs: Record<string, string | boolean | undefined>): Query[] {
  return Object.entries(pairs).flatMap(([field, value]) => (value === undefined ? [] : [term(field, value)]));
}

export function toEventListBody(params: EventListParams, currentCycle: number, after?: SortValue[]): SearchBody {
  const { kind, module, packageId, transactionDigest, sourceId } = params;
  const filter = [...scoped(params, currentCycle), ...exact({ kind, module, packageId, transactionDigest, sourceId })];
  return toListBody({ filter, sort: EVENT_SORT, limit: params.limit, after });
}

export function toKillmailListBody(params: KillmailListParams, currentCycle: number, after?: SortValue[]): SearchBody {
  const { system, victim, killer, reporter, npc } = params;
  const filter = [...scoped(params, currentCycle), ...exact({ systemId: system, victimId: victim, killerIds: killer, reporterId: reporter, npc })];
  // The stored row is the list view (the raw chain payload left out: the reference's weak point 12).
  return toListBody({ filter, sort: KILLMAIL_SORT, limit: params.limit, after });
}
