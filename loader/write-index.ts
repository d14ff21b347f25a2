/**
 * How an index of a load is written: the one place that chooses among the ways, and the only
 * place that falls back from one to another. The plan (plan.ts) says reuse, update or build; an
 * update goes over the live index's line index when there is one it can trust, else it asks
 * Elasticsearch. Each way answers the same questions — what it wrote (its documents sent, the
 * rows that left deleted) and which rows left and changed against the live index, for the
 * changes the load records (changes.ts).
 *
 * - reuse: nothing written, the live index serves again;
 * - derived (an index description with `derive`): written from another index of the load (derive-index.ts);
 * - empty: an optional file the bundle does not have;
 * - build (build.ts): a new index from every line of the file;
 * - update over the line index (update-over-line-index.ts) and update by lookup (update-by-lookup.ts):
 *   a clone of the live index that gets only the lines it does not hold and loses the rows that left.
 *
 * An update that finds its file mostly changed stops (RebuildInstead): its clone is dropped and
 * the index built instead.
 */
import { build } from './build.ts';
import { diffIndices } from './changes.ts';
import { deriveIndex } from './derive-index.ts';
import { RebuildInstead } from './errors.ts';
import { createIndex } from './generations.ts';
import type { IndexAction, IndexPlan } from './plan.ts';
import { updateByLookup } from './update-by-lookup.ts';
import { updateOverLineIndex } from './update-over-line-index.ts';
import type { FileWay, FileWayJob, IndexJob, IndexResult, LineIndexState, Written } from './write-way.ts';

export type { IndexResult, LineIndexState, Written } from './write-way.ts';

/** The way a planned file is written: in this order, the first that applies. */
function fileWayOf(plan: IndexPlan, lines: LineIndexState | undefined): FileWay {
  if (plan.action !== 'update') return build;
  return lines && 'header' in lines ? updateOverLineIndex : updateByLookup;
}

/** An index of the load written by the way its plan and its live line index choose. */
export async function writeIndex(job: IndexJob): Promise<Written> {
  const { client, plan, description, file } = job;
  const scanned = { changes: (previous: string) => diffIndices(client, previous, plan.index) };
  if (plan.action === 'reuse') {
    const result: IndexResult = { name: plan.name, index: plan.index, action: 'reuse', file: file?.path, rows: file?.rowCount ?? 0, documents: job.liveDocuments };
    return { result, ...scanned };
  }
  if (description.derive) return { result: { ...(await derive(job)), startedAt: job.startedAt }, ...scanned };
  if (!file) {
    await createIndex(client, plan.index, description.mapping);
    return { result: { name: plan.name, index: plan.index, action: 'build', rows: 0 }, ...scanned };
  }
  const bar = job.progress.file(file.path, file.rowCount);
  const lines = job.lines;
  const fileJob: FileWayJob = { ...job, file, progress: bar, against: lines && 'header' in lines ? lines : undefined };
  const way = fileWayOf(plan, lines);
  let written: Awaited<ReturnType<FileWay>>;
  let extra: Partial<IndexResult> = lines && 'reason' in lines && way === updateByLookup ? { withoutLineIndex: lines.reason } : {};
  try {
    written = await way(fileJob);
  } catch (error) {
    if (!(error instanceof RebuildInstead) || way === build) throw error;
    // The file mostly changed: the clone is dropped and the index built anew.
    job.progress.log(`  ${file.path}: ${error.message}: building it instead`);
    await client.indices.delete({ index: plan.index, ignore_unavailable: true });
    written = await build(fileJob);
    extra = { rebuilt: error.message };
  }
  const action: IndexAction = way === build || extra.rebuilt ? 'build' : 'update';
  const result: IndexResult = { ...written.result, name: plan.name, action, ...extra, startedAt: job.startedAt };
  const how = action === 'update' ? `updated: ${result.written} written, ${result.removed} removed${result.match ? `, ${result.match.unchanged} unchanged (${result.match.blockLines} in whole blocks)` : ''}` : 'built';
  bar.done(`  ${file.path}: ${result.rows} rows in ${result.seconds!.toFixed(1)} s (${how})`);
  return { result, changes: written.changes ?? scanned.changes };
}

/** A derived index, from its source index of this load once that one is loaded and refreshed. */
async function derive(job: IndexJob): Promise<IndexResult> {
  const { client, plan, description, context, signal, progress } = job;
  const started = performance.now();
  const source = description.derive!.from;
  await createIndex(client, plan.index, description.mapping, plan.shards);
  const rows = await deriveIndex({ client, index: plan.index, from: job.indexOf(source), fromDescription: job.descriptionOf(source), description, context, signal });
  progress.log(`  ${plan.name}: ${rows} rows derived from ${source} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { name: plan.name, index: plan.index, action: 'build', rows };
}
