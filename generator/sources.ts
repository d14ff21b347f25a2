/**
 * The fixed set of sources (13 in sources.jsonl plus one that only appears embedded in
 * entity_sources.jsonl) and the ~30 source artefacts, both ordered `created_at DESC, id DESC`.
 *
 * Sources do not grow with scale: a registry has one per importer and network. The community
 * source is deliberately missing from sources.jsonl (the format allows fact, relation and
 * entity_source source ids outside it), and some artefacts point at a source outside the bundle.
 */
import { createHash } from 'node:crypto';
import type { Context } from './context.ts';
import { compareBytes, sortKeys } from './go-json.ts';
import { createRandom } from './random.ts';
import { formatTime, NANOS_PER_SECOND, parseUtc } from './time.ts';
import type { Environment } from './vocabulary.ts';

export const SOURCE = {
  chain: 'source:chain:chain-testnet:graphql',
  chainObjects: 'source:chain:chain-testnet:graphql:objects',
  universeStillness: 'source:static-client:universe:stillness',
  universeUtopia: 'source:static-client:universe:utopia',
  enemies: 'source:static-client:enemies:stillness',
  types: 'source:static-client:types:stillness',
  recipes: 'source:static-client:recipes:stillness',
  worldApi: 'source:world-api:stillness',
  datahub: 'source:datahub:killmails:stillness',
  observed: 'source:observed:gameplay:stillness',
  reverse: 'source:reverse-engineered:assemblies',
  manual: 'source:manual-inference:analysts',
  onchainUtopia: 'source:onchain:utopia',
  /** Not in sources.jsonl: only embedded in entity_sources rows. */
  community: 'source:community:reports:stillness',
} as const;

/** The universe source of an environment's static data. */
export function universeSource(environment: Environment): string {
  return environment === 'utopia' ? SOURCE.universeUtopia : SOURCE.universeStillness;
}

interface SourceSpec {
  id: string;
  kind: string;
  title: string;
  locator: string;
  url?: string;
  environment: Environment;
  cycle?: number;
  metadata?: Record<string, unknown>;
  createdAt: string;
}

/** Source rows in file order (created_at DESC, id DESC); two share an instant. */
const SOURCES: readonly SourceSpec[] = [
  { id: SOURCE.worldApi, kind: 'world_api', title: 'World API <stillness>', locator: 'https://world-api.stillness.example.invalid/v2', url: 'https://world-api.stillness.example.invalid/v2', environment: 'stillness', cycle: 6, metadata: { pageSize: 100, rateLimit: '10/s' }, createdAt: '2026-06-28T12:00:00Z' },
  { id: SOURCE.manual, kind: 'manual_inference', title: 'Analyst inferences', locator: 'notes/inferences', environment: 'stillness', cycle: 6, createdAt: '2026-06-27T18:30:15.5+10:00' },
  { id: SOURCE.observed, kind: 'observed_gameplay', title: 'Observed gameplay & screenshots', locator: 'observations/2026-06', environment: 'stillness', cycle: 6, createdAt: '2026-06-27T07:00:00Z' },
  { id: SOURCE.universeUtopia, kind: 'static_client_data', title: 'Static client universe tables (utopia)', locator: 'extract/universe-utopia', environment: 'utopia', cycle: 6, metadata: { regionCount: 4, sourceDirectory: 'extract/universe-utopia', systemCount: 310 }, createdAt: '2026-06-26T03:30:00Z' },
  { id: SOURCE.universeStillness, kind: 'static_client_data', title: 'Static client universe tables', locator: 'extract/universe', environment: 'stillness', cycle: 6, metadata: { constellationCount: 412, jumpCount: 3120, regionCount: 38, sourceDirectory: 'extract/universe', systemCount: 2950 }, createdAt: '2026-06-26T03:30:00Z' },
  { id: SOURCE.enemies, kind: 'static_client_data', title: 'Reviewed static enemy types', locator: 'extract/enemies', environment: 'stillness', cycle: 6, metadata: { reviewed: true, rowCount: 26 }, createdAt: '2026-06-26T03:29:58.1Z' },
  { id: SOURCE.types, kind: 'static_client_data', title: 'Static client type tables', locator: 'extract/types', environment: 'stillness', cycle: 6, metadata: { clientBuild: 'build-4417' }, createdAt: '2026-06-26T03:29:57.000318Z' },
  { id: SOURCE.recipes, kind: 'static_client_data', title: 'Static client recipes', locator: 'extract/recipes', environment: 'stillness', cycle: 6, createdAt: '2026-06-26T03:29:56Z' },
  { id: SOURCE.chainObjects, kind: 'chain_object', title: 'Chain testnet GraphQL objects', locator: 'https://graphql.chain-testnet.example.invalid', url: 'https://graphql.chain-testnet.example.invalid', environment: 'stillness', metadata: { network: 'chain-testnet', objects: true }, createdAt: '2026-06-25T09:12:40.004Z' },
  { id: SOURCE.chain, kind: 'chain_event', title: 'Chain testnet GraphQL', locator: 'https://graphql.chain-testnet.example.invalid', url: 'https://graphql.chain-testnet.example.invalid', environment: 'stillness', metadata: { network: 'chain-testnet' }, createdAt: '2026-06-25T09:12:40.004Z' },
  { id: SOURCE.onchainUtopia, kind: 'onchain', title: 'On-chain utopia indexer', locator: 'indexer://utopia', environment: 'utopia', cycle: 6, createdAt: '2026-06-25T09:00:00Z' },
  { id: SOURCE.datahub, kind: 'datahub', title: 'Datahub killmail feed', locator: 'datahub://killmails', environment: 'stillness', cycle: 5, metadata: { feed: 'killmails', format: 'csv' }, createdAt: '2026-04-02T10:15:00.25Z' },
  { id: SOURCE.reverse, kind: 'reverse_engineered', title: 'Reverse-engineered assembly layouts', locator: 'reverse/assemblies', environment: 'unknown', createdAt: '2026-02-14T08:00:00Z' },
];

const COMMUNITY_SOURCE: SourceSpec = {
  id: SOURCE.community, kind: 'community_report', title: 'Community reports', locator: 'forum://reports', environment: 'stillness', cycle: 6, createdAt: '2026-06-29T20:00:00Z',
};

/** A source object (sources.jsonl row shape), fields in struct order. */
function sourceObject(spec: SourceSpec): Record<string, unknown> {
  const row: Record<string, unknown> = { id: spec.id, kind: spec.kind, title: spec.title, locator: spec.locator };
  if (spec.url !== undefined) row.url = spec.url;
  row.environment = spec.environment;
  if (spec.cycle !== undefined) row.cycle = spec.cycle;
  if (spec.metadata !== undefined) row.metadata = sortKeys(spec.metadata);
  row.createdAt = spec.createdAt;
  return row;
}

const BY_ID = new Map([...SOURCES, COMMUNITY_SOURCE].map((spec) => [spec.id, spec]));

/** The full source object embedded in entity_sources rows. */
export function embeddedSource(id: string): Record<string, unknown> {
  const spec = BY_ID.get(id);
  if (!spec) throw new Error(`unknown source ${id}`);
  return sourceObject(spec);
}

/** The kind of a source id (for facts' confidence and events' sourceKind). */
export function sourceKind(id: string): string {
  return BY_ID.get(id)?.kind ?? 'unknown';
}

/** sources.jsonl rows in file order; the datahub source carries an unknown extra field. */
export function sourceRows(): Record<string, unknown>[] {
  return SOURCES.map((spec) => {
    const row = sourceObject(spec);
    if (spec.id === SOURCE.datahub) row.futureField = { x: 1 };
    return row;
  });
}

const ARTEFACT_KINDS: readonly (readonly [string, string, string])[] = [
  [SOURCE.universeStillness, 'static_client_systems', 'stillness'],
  [SOURCE.universeStillness, 'static_client_regions', 'stillness'],
  [SOURCE.universeStillness, 'static_client_jumps', 'stillness'],
  [SOURCE.universeStillness, 'static_client_constellations', 'stillness'],
  [SOURCE.universeUtopia, 'static_client_systems', 'utopia'],
  [SOURCE.universeUtopia, 'static_client_regions', 'utopia'],
  [SOURCE.enemies, 'static_client_enemies', 'stillness'],
  [SOURCE.types, 'static_client_types', 'stillness'],
  [SOURCE.types, 'static_client_groups', 'stillness'],
  [SOURCE.recipes, 'static_client_recipes', 'stillness'],
  [SOURCE.worldApi, 'world_api_snapshot', 'stillness'],
  [SOURCE.datahub, 'datahub_export', 'stillness'],
  ['source:static-client:universe:liminality', 'static_client_systems', 'unknown'],
];

/**
 * source_artefacts.jsonl rows (30), newest `createdAt` first with one exact tie. Older copies of
 * a kind are superseded by the newest; one artefact's source is not in the bundle; one row has
 * no `rowCount` (the writer omits 0) and one carries an unknown extra field.
 */
export function artefactRows(ctx: Context): Record<string, unknown>[] {
  const random = createRandom(ctx.seed, 'artefacts');
  const newest = parseUtc('2026-06-29T23:00:00Z');
  const rows: { ns: bigint; row: Record<string, unknown> }[] = [];
  const latestOfKind = new Map<string, string>();
  for (let n = 0; n < 30; n += 1) {
    const [sourceId, kind, environment] = ARTEFACT_KINDS[n % ARTEFACT_KINDS.length]!;
    const copy = Math.floor(n / ARTEFACT_KINDS.length);
    const sha256 = createHash('sha256').update(`${ctx.seed}:${kind}:${sourceId}:${copy}`).digest('hex');
    const ns = n === 1 ? rows[0]!.ns : newest - BigInt(n * 86_400 + random.int(80_000)) * NANOS_PER_SECOND - BigInt(random.int(1000)) * 1_000_000n;
    const createdAt = formatTime(ns, n === 5 ? 600 : 0);
    const key = `${sourceId}|${kind}`;
    const row: Record<string, unknown> = {
      id: `artefact:${sha256}`,
      sourceId,
    };
    if (n % 7 !== 3) row.sourceKind = sourceKind(sourceId) === 'unknown' ? 'static_client_data' : sourceKind(sourceId);
    row.kind = kind;
    if (n % 5 !== 4) row.artefactKind = kind;
    row.environment = environment;
    row.pathOrUri = `artefacts/${sha256.slice(0, 2)}/${sha256}.json`;
    row.sha256 = sha256;
    row.sizeBytes = 10_000 + random.int(5_000_000);
    if (n !== 2) row.rowCount = 1 + random.int(30_000);
    row.contentType = kind.endsWith('export') ? 'text/csv' : 'application/json';
    row.extractedAt = formatTime(ns - BigInt(random.int(5_000)) * 1_000_000n);
    row.importerName = `${kind.split('_').slice(0, 2).join('-')}`;
    row.importerVersion = copy === 0 ? '0.2.0' : '0.1.0';
    if (kind.startsWith('static_client')) row.clientBuild = `build-${4417 - copy * 12}`;
    if (n % 4 === 0) row.patchLabel = `patch-${6 - copy}.${n % 3}`;
    if (copy === 0) row.cycle = 6;
    else if (copy === 1) row.cycle = 5;
    row.reviewStatus = copy === 0 ? random.pick(['reviewed', 'published']) : 'superseded';
    const newer = latestOfKind.get(key);
    if (newer !== undefined) row.supersededByArtefactId = newer;
    else latestOfKind.set(key, row.id as string);
    if (n % 6 === 1) row.notes = 'Re-extracted after client patch & decoder fix.';
    row.createdAt = createdAt;
    if (n === 7) row.futureField = { x: 1 };
    rows.push({ ns, row });
  }
  rows.sort((a, b) => (a.ns === b.ns ? compareBytes(b.row.id as string, a.row.id as string) : a.ns > b.ns ? -1 : 1));
  return rows.map((entry) => entry.row);
}
