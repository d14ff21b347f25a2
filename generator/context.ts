/**
 * The settings every row module reads: seed, scale, the export instant (derived from the seed,
 * never from the clock), the entity table and the on-chain package ids. Built once per bundle.
 */
import { buildEntityTable, type EntityTable } from './entity-table.ts';
import { createRandom } from './random.ts';
import { formatTime, NANOS_PER_SECOND, parseUtc } from './time.ts';

export interface Context {
  readonly seed: number;
  readonly scale: number;
  /** Events per entity (export-format.md section 9 says about 12; benchmarks raise it). */
  readonly eventsPerEntity: number;
  /** The export instant; every generated time is at or before it. */
  readonly generatedNs: bigint;
  /** Its text, with all nine fractional digits. */
  readonly generatedAt: string;
  readonly table: EntityTable;
  /** The world package (`0x` + 64 hex) and its upgraded version. */
  readonly worldPackage: string;
  readonly worldPackageV2: string;
}

export function createContext(seed: number, scale: number, eventsPerEntity = 12): Context {
  if (!Number.isSafeInteger(seed)) throw new Error(`seed must be an integer, got ${seed}`);
  if (!Number.isSafeInteger(scale) || scale < 1) throw new Error(`scale must be a positive integer, got ${scale}`);
  if (!Number.isSafeInteger(eventsPerEntity) || eventsPerEntity < 1) throw new Error(`eventsPerEntity must be a positive integer, got ${eventsPerEntity}`);
  const random = createRandom(seed, 'context');
  // A fixed morning of 2026-06-30, moved by the seed; nine fraction digits, the last never 0.
  const seconds = BigInt(random.int(3600));
  const nanos = BigInt(random.int(100_000_000) * 10 + 1 + random.int(9));
  const generatedNs = parseUtc('2026-06-30T04:00:00Z') + seconds * NANOS_PER_SECOND + nanos;
  return {
    seed,
    scale,
    eventsPerEntity,
    generatedNs,
    generatedAt: formatTime(generatedNs),
    table: buildEntityTable(seed, scale, generatedNs),
    worldPackage: `0x${random.hex(64)}`,
    worldPackageV2: `0x${random.hex(64)}`,
  };
}
