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
 *   keeps every other document as it is (loader/update-index.ts);
 * - otherwise → **build** a new index from the file.
 *
 * `force` builds everything. Small files are always built: a clone and a diff cost more than
 * indexing a few thousand rows.
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
  /** Files with fewer rows are built rather than updated (default UPDATE_MIN_ROWS). */
  updateMinRows?: number;
}

/**
 * Primary shards for a file of this many uncompressed bytes: one per `target` bytes, at least
 * one. An index holds roughly its JSONL's size (rows verbatim + indexed fields), so the target
 * is the shard size aimed at; Elastic's sizing guide says 10–50 GB per shard.
 */
export function shardsFor(sizeBytes: number, target: number): number {
  return Math.max(1, Math.ceil(sizeBytes / target));
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
  const { prefix, generation, descriptions, files, schema, live, force = false, shardTargetBytes, updateMinRows = UPDATE_MIN_ROWS } = input;
  const byName = new Map(descriptions.map((d) => [d.name, d]));
  return descriptions.map((description) => {
    const file = fileOf(description, files);
    const shards = shardsFor(file?.sizeBytes ?? 0, shardTargetBytes);
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
    if (!force && previous && sameBase && file && file.rowCount >= updateMinRows) return { ...plan, action: 'update', index: own, from: previous };
    return { ...plan, action: 'build', index: own };
  });
}
