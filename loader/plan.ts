/**
 * What a load does with each index, decided before anything is written (pure: no I/O).
 *
 * An index's documents are a function of its own file, the files it `dependsOn` and the index
 * schema (mappings, document version, cycle settings). Its content key says exactly that:
 * `<base>:<file sha256>`, where the base hashes the schema, the shard count and the sha256s of
 * the files depended on. Then, against the live generation:
 *
 * - same key → **reuse**: the new generation's alias points at the very index the live one
 *   reads; the file is not even read (its sha256 is the one that index was verified against);
 * - same base, another file, a large file → **update**: a clone of the live index (segments
 *   hard-linked: seconds) gets only the rows whose line changed, loses the rows that left, and
 *   keeps every other document as it is (loader/write-index.ts);
 * - otherwise → **build** a new index from the file.
 *
 * `force` builds everything. Small files are always built: a clone and a diff cost more than
 * indexing a few thousand rows. So is a file whose rows mostly changed: given an estimate of
 * the share of its lines the live index already holds (loader/reuse-estimate.ts), an update is
 * planned only where `updatePays`.
 */
import { createHash } from 'node:crypto';
import type { IndexDescription } from '../src/indices/description.ts';
import { type GenerationDoc, concreteIndex, indexName } from '../src/indices/generation.ts';

/** Below this many rows an index is rebuilt rather than updated. */
export const UPDATE_MIN_ROWS = 50_000;

/** What the plan needs of a bundle file. */
export interface PlannedFile {
  path: string;
  sha256: string;
  sizeBytes: number;
  rowCount: number;
}

export type IndexAction = 'reuse' | 'update' | 'build';

export interface IndexPlan {
  /** Index name (`events`). */
  name: string;
  /** Its file in this bundle; absent for an optional file the bundle does not have (empty index). */
  file?: PlannedFile;
  action: IndexAction;
  /** The concrete index the new generation reads. */
  index: string;
  /** The live index it is reused from or cloned from. */
  from?: string;
  /** The live index of the same name, if any: where rows seen before keep their first instant. */
  previous?: string;
  key: string;
  shards: number;
}

export interface PlanInput {
  prefix: string;
  generation: string;
  descriptions: readonly Pick<IndexDescription<any>, 'name' | 'files' | 'dependsOn'>[];
  /** Bundle files by manifest path. */
  files: ReadonlyMap<string, PlannedFile>;
  schema: string;
  live?: Pick<GenerationDoc, 'generation' | 'indices' | 'contentKeys'>;
  force?: boolean;
  /** Bytes of uncompressed JSONL per primary shard (see `shardsFor`). */
  shardTargetBytes: number;
  /** Primary shards per index at least (default 1). */
  minShards?: number;
  /** Files with fewer rows are built rather than updated (default UPDATE_MIN_ROWS). */
  updateMinRows?: number;
  /** Data nodes of the cluster (see `shardsFor`; default 1). */
  dataNodes?: number;
  /** By index name: what an update of it would find (an index without one is updated whenever it may be). */
  estimates?: ReadonlyMap<string, ReuseEstimate>;
}

/** What an update of one index would find in the live one, estimated before anything is written. */
export interface ReuseEstimate {
  /** Lines of the new file. */
  rows: number;
  /** Share of the file's lines the live index already holds, byte for byte (a sample's). */
  unchangedShare: number;
  /** Documents the live index holds. */
  previousDocuments: number;
}

/**
 * Costs of an update's steps, in units of one row built. An update hashes every line and looks
 * the hashes up in the live index (LOOKUP a row), writes each new or changed row into a clone
 * that already holds the old one — a replace: a delete and a write, more merging (WRITE a row)
 * — and deletes the rows that left after a scan (REMOVE a row). Fitted to the measured loads of the
 * 1.5 M-row bundle: a load whose every row changed took 1.7× a build through the update path
 * (LOOKUP + WRITE + REMOVE), and the events-only next export, every row but 0.75 % unchanged,
 * about a third of the events' build (LOOKUP).
 */
export const UPDATE_COST = { LOOKUP: 0.25, WRITE: 1.1, REMOVE: 0.35 } as const;

/**
 * Whether updating the live index costs less than building anew: with these constants, when
 * about half the lines or more are unchanged (a next export: nearly all; a bundle of other data:
 * nearly none).
 */
export function updatePays(estimate: ReuseEstimate): boolean {
  const { rows, unchangedShare, previousDocuments } = estimate;
  const kept = Math.min(rows, Math.max(0, unchangedShare) * rows);
  const written = rows - kept;
  const removed = Math.max(0, previousDocuments - kept);
  return UPDATE_COST.LOOKUP * rows + UPDATE_COST.WRITE * written + UPDATE_COST.REMOVE * removed < rows;
}

/**
 * Below this many bytes of JSONL per shard an index is not spread over more data nodes: a
 * shard's fixed costs (a search fans out to every shard, each keeps its own segments and
 * caches) would outweigh the write threads it adds.
 */
export const SPREAD_MIN_SHARD_BYTES = 64 * 1024 ** 2;

/**
 * Primary shards for a file of this many uncompressed bytes: one per `target` bytes, at least
 * one. An index holds roughly its JSONL's size (rows verbatim + indexed fields), so the target
 * is the shard size aimed at; Elastic's sizing guide says 10–50 GB per shard. On a cluster of
 * several data nodes a large file gets at least one shard per node, so that a load keeps every
 * node's write threads busy (a bulk request's documents are written by the nodes holding their
 * shards) — but never a shard of less than SPREAD_MIN_SHARD_BYTES.
 */
export function shardsFor(sizeBytes: number, target: number, dataNodes = 1): number {
  const bySize = Math.ceil(sizeBytes / target);
  const spread = Math.min(Math.max(1, dataNodes), Math.floor(sizeBytes / SPREAD_MIN_SHARD_BYTES));
  return Math.max(1, bySize, spread);
}

/** The bundle file that feeds an index: its first listed stem, plain `.jsonl` name. */
export function fileOf(description: Pick<IndexDescription<any>, 'files'>, files: ReadonlyMap<string, PlannedFile>): PlannedFile | undefined {
  for (const stem of description.files) {
    const file = files.get(`${stem}.jsonl`);
    if (file) return file;
  }
  return undefined;
}

function hash(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 16);
}

export function planIndices(input: PlanInput): IndexPlan[] {
  const { prefix, generation, descriptions, files, schema, live, force = false, shardTargetBytes, minShards = 1, updateMinRows = UPDATE_MIN_ROWS, dataNodes = 1, estimates } = input;
  const byName = new Map(descriptions.map((d) => [d.name, d]));
  return descriptions.map((description) => {
    const file = fileOf(description, files);
    const shards = Math.max(minShards, shardsFor(file?.sizeBytes ?? 0, shardTargetBytes, dataNodes));
    const depends = (description.dependsOn ?? []).map((name) => {
      const dependency = byName.get(name);
      if (!dependency) throw new Error(`${description.name} depends on an unknown index ${name}`);
      return fileOf(dependency, files)?.sha256 ?? null;
    });
    const base = hash([schema, description.name, shards, depends]);
    const key = `${base}:${file?.sha256 ?? 'absent'}`;
    const liveKey = live?.contentKeys?.[description.name];
    const previous = live ? concreteIndex(prefix, live, description.name) : undefined;
    const own = indexName(prefix, description.name, generation);
    const plan = { name: description.name, file, key, shards, previous };
    if (!force && previous && liveKey === key) return { ...plan, action: 'reuse', index: previous, from: previous };
    const sameBase = liveKey !== undefined && liveKey.slice(0, liveKey.indexOf(':')) === base;
    const estimate = estimates?.get(description.name);
    const updatable = !force && previous && sameBase && file && file.rowCount >= updateMinRows;
    if (updatable && (!estimate || updatePays(estimate))) return { ...plan, action: 'update', index: own, from: previous };
    return { ...plan, action: 'build', index: own };
  });
}

/**
 * Whether an update over a line index should go on, from what it has found so far: it stops for
 * a build once the lines it had to send outnumber those the live index holds, past what the
 * file's growth explains (an export adds its new rows on top) and a margin of 5 % of the file
 * (at most 50,000 lines): a bundle of other data stops within that, a next export never does.
 * What the stopped update did is lost, so the margin bounds that loss to ~5 % of a build.
 */
export function updateStillPays(found: { sent: number; matched: number; rows: number; previousDocuments: number }): boolean {
  const { sent, matched, rows, previousDocuments } = found;
  const margin = Math.min(50_000, Math.ceil(rows * 0.05));
  const added = Math.max(0, rows - previousDocuments);
  return sent <= added + margin || sent <= matched;
}
