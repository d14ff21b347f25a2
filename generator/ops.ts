/**
 * The four ops documents (`{"data": ...}`, pretty-printed): freshness and cursors (arrays),
 * chain coverage (an OBJECT with a target list whose counters add up), source gaps (stillness
 * rows plus a few utopia rows, severities `actionable`, `info` and `none`, rows with count 0
 * dropped except the always-present decoder row). Counts that describe the data (unresolved
 * killmail actors, deployables without owner or location, placeholder tribes) come from the
 * passes over the rows, so they match the files.
 */
import type { Context } from './context.ts';
import { formatTime, NANOS_PER_SECOND, ZERO_TIME } from './time.ts';
import type { Environment } from './vocabulary.ts';

/** Per-environment tallies gathered while the row files are written. */
export interface OpsStats {
  unresolvedKillmails: Record<Environment, number>;
  deployablesWithoutOwner: Record<Environment, number>;
  deployablesWithoutLocation: Record<Environment, number>;
  placeholderTribes: Record<Environment, number>;
  tribesWithoutProfile: Record<Environment, number>;
  recipes: Record<Environment, number>;
}

export function emptyStats(): OpsStats {
  const zero = (): Record<Environment, number> => ({ stillness: 0, utopia: 0, unknown: 0 });
  return {
    unresolvedKillmails: zero(), deployablesWithoutOwner: zero(), deployablesWithoutLocation: zero(),
    placeholderTribes: zero(), tribesWithoutProfile: zero(), recipes: zero(),
  };
}

const minutes = (n: number) => BigInt(n) * 60n * NANOS_PER_SECOND;

function sources(ctx: Context) {
  const events = `chain:chain-testnet:events:world:${ctx.worldPackage}`;
  const objects = `chain:chain-testnet:objects:world:${ctx.worldPackage}`;
  return {
    killmail: `${events}:killmail`,
    character: `${events}:character`,
    inventory: `${events}:inventory`,
    fuel: `${events}:fuel`,
    status: `${events}:status`,
    rift: `${events}:rift`,
    gate: `${objects}::gate::Gate`,
    storage: `${objects}::storage_unit::StorageUnit`,
    derivation: `chain:chain-testnet:derivations:killmails`,
  };
}

/** ops_freshness.json */
export function freshnessDocument(ctx: Context): unknown {
  const s = sources(ctx);
  const at = (back: number) => formatTime(ctx.generatedNs - minutes(back));
  return {
    data: [
      { source: s.killmail, environment: 'stillness', lastSuccessfulIngest: at(4), lastCheckpoint: '180244211', eventsProcessed: 18422 * ctx.scale, errorCount: 0, stalenessStatus: 'live_indexed', updatedAt: at(4) },
      { source: s.character, environment: 'stillness', lastSuccessfulIngest: at(190), lastCheckpoint: '180240007', eventsProcessed: 9120 * ctx.scale, errorCount: 2, lastErrorSummary: 'provider window exceeded', stalenessStatus: 'cached_snapshot', updatedAt: at(185) },
      { source: s.gate, environment: 'stillness', lastSuccessfulIngest: at(60), eventsProcessed: 211, errorCount: 2, lastErrorSummary: 'request is outside consistent range', stalenessStatus: 'cached_snapshot', updatedAt: at(18) },
      { source: 'static-client:universe:stillness', environment: 'stillness', eventsProcessed: 2950, errorCount: 0, stalenessStatus: 'static_cycle_data', updatedAt: '2026-06-26T03:30:00Z' },
      { source: s.rift, environment: 'utopia', lastSuccessfulIngest: ZERO_TIME, eventsProcessed: 0, errorCount: 0, stalenessStatus: 'unknown', updatedAt: at(720) },
    ],
  };
}

/** ops_cursors.json (newest `updatedAt` first). */
export function cursorsDocument(ctx: Context): unknown {
  const s = sources(ctx);
  const at = (back: number) => formatTime(ctx.generatedNs - minutes(back));
  const cursor = (checkpoint: number) => Buffer.from(JSON.stringify({ c: checkpoint })).toString('base64');
  return {
    data: [
      { id: `cursor:${s.killmail}`, source: s.killmail, environment: 'stillness', cursorValue: cursor(180244211), cursorKind: 'chain_event', lastSuccessfulIngest: at(4), lastCheckpoint: '180244211', eventsProcessed: 18422 * ctx.scale, errorCount: 0, updatedAt: at(4) },
      { id: `cursor:${s.gate}`, source: s.gate, environment: 'stillness', cursorValue: cursor(35260119), cursorKind: 'chain_object', eventsProcessed: 211, errorCount: 2, lastErrorSummary: 'provider window exceeded', updatedAt: at(18) },
      { id: `cursor:${s.derivation}`, source: s.derivation, environment: 'stillness', cursorValue: 'eyJvZmZzZXQiOjB9', cursorKind: 'chain_event_derivation', eventsProcessed: 5480 * ctx.scale, errorCount: 0, updatedAt: at(30) },
      { id: `cursor:${s.character}`, source: s.character, environment: 'stillness', cursorValue: cursor(180240007), cursorKind: 'chain_event', lastSuccessfulIngest: at(190), lastCheckpoint: '180240007', eventsProcessed: 9120 * ctx.scale, errorCount: 2, lastErrorSummary: 'provider window exceeded', updatedAt: at(185) },
      { id: `cursor:${s.rift}`, source: s.rift, environment: 'utopia', cursorValue: '', cursorKind: 'chain_event', eventsProcessed: 0, errorCount: 0, updatedAt: at(720) },
    ],
  };
}

/** ops_chain_coverage.json: `data` is an object; its counters are derived from `targets`. */
export function coverageDocument(ctx: Context): unknown {
  const s = sources(ctx);
  const at = (back: number) => formatTime(ctx.generatedNs - minutes(back));
  const pkg = ctx.worldPackage;
  const targets: Record<string, unknown>[] = [
    { kind: 'event', status: 'indexed', cursorId: `cursor:${s.killmail}`, source: s.killmail, cursorKind: 'chain_event', environment: 'stillness', network: 'chain-testnet', packageName: 'world', packageId: pkg, role: 'world', moduleName: 'killmail', eventType: `${pkg}::killmail::KillmailCreatedEvent`, rowsProcessed: 18422 * ctx.scale, lastSuccessfulIngest: at(4), lastCheckpoint: '180244211', errorCount: 0, updatedAt: at(4) },
    { kind: 'event', status: 'indexed', cursorId: `cursor:${s.character}`, source: s.character, cursorKind: 'chain_event', environment: 'stillness', network: 'chain-testnet', packageName: 'world', packageId: pkg, moduleName: 'character', eventType: `${pkg}::character::CharacterCreatedEvent`, checkpointAfter: 170000000, rowsProcessed: 9120 * ctx.scale, lastSuccessfulIngest: at(190), lastCheckpoint: '180240007', errorCount: 2, lastErrorSummary: 'provider window exceeded', updatedAt: at(185) },
    { kind: 'event', status: 'indexed', cursorId: `cursor:${s.inventory}`, source: s.inventory, cursorKind: 'chain_event', environment: 'stillness', moduleName: 'inventory', rowsProcessed: 301220 * ctx.scale, errorCount: 0, updatedAt: at(6) },
    { kind: 'event', status: 'errored', cursorId: `cursor:${s.fuel}`, source: s.fuel, cursorKind: 'chain_event', environment: 'stillness', moduleName: 'fuel', rowsProcessed: 4410, errorCount: 7, lastErrorSummary: 'decode error: unexpected field <amount_v2> & retry', updatedAt: at(40) },
    { kind: 'event', status: 'limited', cursorId: `cursor:${s.status}`, source: s.status, cursorKind: 'chain_event', environment: 'stillness', moduleName: 'status', checkpointAfter: 179000000, checkpointBefore: 180244211, rowsProcessed: 20000, errorCount: 0, updatedAt: at(12), limitedByMaxPages: true },
    { kind: 'event', status: 'not_seen', cursorId: `cursor:${s.rift}`, source: s.rift, environment: 'utopia', moduleName: 'rift', rowsProcessed: 0, errorCount: 0, updatedAt: at(720), missingCursor: true, emptyStream: true },
    { kind: 'object', status: 'range_blocked', cursorId: `cursor:${s.gate}`, source: s.gate, cursorKind: 'chain_object', environment: 'stillness', typeName: 'Gate', typeRepr: `${pkg}::gate::Gate`, rowsProcessed: 211, errorCount: 2, lastErrorSummary: 'request is outside consistent range', updatedAt: at(18), providerRangeBlocked: true },
    { kind: 'object', status: 'indexed', cursorId: `cursor:${s.storage}`, source: s.storage, cursorKind: 'chain_object', environment: 'stillness', typeName: 'StorageUnit', typeRepr: `${pkg}::storage_unit::StorageUnit`, rowsProcessed: 8800 * ctx.scale, lastSuccessfulIngest: at(9), errorCount: 0, updatedAt: at(9) },
    { kind: 'derivation', status: 'indexed', cursorId: `cursor:${s.derivation}`, source: s.derivation, cursorKind: 'chain_event_derivation', environment: 'stillness', rowsProcessed: 5480 * ctx.scale, errorCount: 0, updatedAt: at(30) },
  ];
  const count = (field: string, value: string) => targets.filter((target) => target[field] === value).length;
  return {
    data: {
      environment: 'stillness',
      network: 'mixed',
      coverageBasis: 'cursor_table',
      fullCoverageProven: false,
      targetCount: targets.length,
      eventTargets: count('kind', 'event'),
      objectTargets: count('kind', 'object'),
      derivationTargets: count('kind', 'derivation'),
      indexedTargets: count('status', 'indexed'),
      erroredTargets: count('status', 'errored'),
      limitedTargets: count('status', 'limited'),
      notSeenTargets: count('status', 'not_seen'),
      rangeBlockedTargets: count('status', 'range_blocked'),
      rowsProcessed: targets.reduce((sum, target) => sum + (target.rowsProcessed as number), 0),
      lastSuccessfulIngest: at(4),
      targets,
      warnings: ['full coverage is not proven: cursor table only', 'one object stream is outside the provider range'],
    },
  };
}

interface Gap {
  kind: string;
  category: string;
  severity: 'actionable' | 'info' | 'none';
  summary: string;
  recommendedAction: string;
  suggestedCommands?: string[];
  count: (environment: Environment) => number;
  always?: boolean;
}

/** ops_source_gaps.json: stillness rows, then utopia rows. */
export function sourceGapsDocument(stats: OpsStats): unknown {
  const gaps: Gap[] = [
    { kind: 'ownership_evidence_only', category: 'resolver_missing', severity: 'actionable', summary: 'Deployables without an owner relation.', recommendedAction: 'Import owner caps, then re-derive ownership.', suggestedCommands: ['import objects --type OwnerCap', 'rederive ownership'], count: (e) => stats.deployablesWithoutOwner[e] },
    { kind: 'location_evidence_only', category: 'resolver_missing', severity: 'info', summary: 'Deployables whose system is only known from a location hash.', recommendedAction: 'Collect location reveals.', count: (e) => stats.deployablesWithoutLocation[e] },
    { kind: 'unresolved_killmail_actors', category: 'resolver_missing', severity: 'actionable', summary: 'Some killmails lack a resolved actor or system.', recommendedAction: 'Import more mapping evidence, then re-derive.', suggestedCommands: ['rederive killmails'], count: (e) => stats.unresolvedKillmails[e] },
    { kind: 'chain_object_provider_range_blocked', category: 'provider_blocked', severity: 'actionable', summary: 'An object stream is outside the provider\'s consistent range.', recommendedAction: 'Re-run with an archive provider.', count: (e) => (e === 'stillness' ? 1 : 0) },
    { kind: 'static_client_recipes', category: 'static_data_missing', severity: 'info', summary: 'Recipes & blueprints lack static input tables.', recommendedAction: 'Extract recipe tables from the client.', count: (e) => stats.recipes[e] },
    { kind: 'tribe_identity_names', category: 'source_missing', severity: 'info', summary: 'Tribes known only by a placeholder name.', recommendedAction: 'Import tribe identities.', count: (e) => stats.placeholderTribes[e] },
    { kind: 'tribe_identity_profiles', category: 'source_missing', severity: 'info', summary: 'Tribes without a public profile.', recommendedAction: 'Import tribe profiles.', count: (e) => stats.tribesWithoutProfile[e] },
    { kind: 'static_client_full_table_decoder', category: 'decoder_review_required', severity: 'none', summary: 'The full-table decoder awaits review; partial tables are used.', recommendedAction: 'None for now.', count: () => 1, always: true },
  ];
  const rows: Record<string, unknown>[] = [];
  for (const environment of ['stillness', 'utopia'] as const) {
    for (const gap of gaps) {
      const count = gap.count(environment);
      if (count === 0 && !gap.always) continue;
      const row: Record<string, unknown> = {
        id: `source-gap:${environment}:${gap.kind.replaceAll('_', '-')}`,
        kind: gap.kind,
        category: gap.category,
        severity: gap.severity,
        environment,
        count,
        summary: gap.summary,
        recommendedAction: gap.recommendedAction,
      };
      if (gap.suggestedCommands) row.suggestedCommands = gap.suggestedCommands;
      rows.push(row);
    }
  }
  return { data: rows };
}
