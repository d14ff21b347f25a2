/**
 * Loads a bundle as a new generation and makes it live.
 *
 * Order: open and check the manifest → skip if this bundle is already live (unless forced)
 * → plan each index against the live generation (reuse, update or build: plan.ts; whether an
 * update pays, from a sample of each file's lines: reuse-estimate.ts) → build and update what
 * changed, streaming each file and checking hashes and counts, a few files side by side (each
 * after the indices its documents read) under one budget of bulk requests in flight sized from
 * the cluster's write threads (write-capacity.ts); reused indices are not even read → check the small JSON documents → finish the new indices (replicas, refresh,
 * write block) and prove each holds one document per distinct id → keep an immutable copy of
 * the files → write the generation document → move all aliases in one call → keep the live
 * generation and the newest others up to `keep`, drop the rest and every index no kept
 * generation reads. Any failure — or an abort (SIGTERM) — deletes what this load built; the
 * live generation is never touched before the swap.
 *
 * Every index written gets its line index under DATA_DIR (line-index.ts): what the next
 * export's update compares its file with, in place of asking Elasticsearch about every line.
 * One that is missing or does not match is never trusted: the update then asks Elasticsearch,
 * as the plan's log line says, and writes a line index for the next time.
 */
import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@elastic/elasticsearch';
import { type CycleStart, DEFAULT_ES_REPLICAS, DEFAULT_KEEP_GENERATIONS, DEFAULT_MIN_SHARDS, DEFAULT_SHARD_TARGET_BYTES, DEFAULT_TOMBSTONE_DAYS } from '../src/config.ts';
import { INDICES, OPS_DOCUMENTS, indexSchema } from '../src/indices/all.ts';
import { entities } from '../src/indices/entities.ts';
import { type LoadContext, rowOfHit, rowsInDocValues, rowsOfIds } from '../src/indices/description.ts';
import { type GenerationDoc, type GenerationFile, META_INDEX, META_MAPPING, indexName, newGenerationId } from '../src/indices/generation.ts';
import { toInstant } from '../src/time/instant.ts';
import { type ObjectStore, createObjectStore } from '../src/store/object-store.ts';
import { type Bundle, type BundleFile, openBundle } from './bundle.ts';
import { LoadError } from './errors.ts';
import { copyBundleFiles, exportDirOf, removeExportDir } from './export-copy.ts';
import { keepLastPerId } from './last-per-id.ts';
import { LineIndexWriter, lineIndexDir, lineIndexPath, openLineIndex, pruneLineIndices } from './line-index.ts';
import { createMetaIndex, deleteGeneration, finishIndices, generationDocs, liveGeneration, pruneGenerations, recordBundle, setReplicas, swapAliases } from './generations.ts';
import { dropChangesAfter, ensureChangesIndex, pruneChangesBefore, writeChanges } from './changes.ts';
import { changesIndices } from '../src/indices/changes.ts';
import { INSTANT_MIN } from '../src/time/instant.ts';
import { DEFAULT_FLUSH_BYTES, type FileLoadResult, checkIntegrity } from './load-file.ts';
import { type IndexPlan, type ReuseEstimate, planIndices } from './plan.ts';
import { POOL_MIN_FILE_BYTES, ParsePool, poolSize } from './parse-pool.ts';
import { previousIndex } from './previous-index.ts';
import { type Progress, silentProgress } from './progress.ts';
import { readLines } from './read-lines.ts';
import { withLoadLock } from './state.ts';
import { estimateReuse } from './reuse-estimate.ts';
import { runTasks } from './run-tasks.ts';
import { Semaphore } from './semaphore.ts';
import { type IndexResult, type LineIndexState, type Written, writeIndex } from './write-index.ts';
import { clusterCapacity, filesAtOnce, inFlightBudget } from './write-capacity.ts';

/** Files a bundle cannot be served without. */
const REQUIRED_FILES = ['catalog.json', 'entities.jsonl'];

export interface LoadOptions {
  client: Client;
  prefix: string;
  dataDir: string;
  cycleStarts: readonly CycleStart[];
  /** Overrides the generation's current cycle (else manifest `cycles`, else the data). */
  currentCycle?: number;
  /** Load even when this bundle is already live, and build every index anew. */
  force?: boolean;
  /** Replicas once loaded (default: as with ES_REPLICAS unset). */
  replicas?: number;
  /** Generations kept, the live one included (default: as with KEEP_GENERATIONS unset, the live one and the one before). */
  keep?: number;
  /** Hours a generation stays kept after its load beyond `keep` (KEEP_HOURS; default: by count alone). */
  keepHours?: number;
  /** Days the rows that left and changed are kept for `include=removed` and 410s (TOMBSTONE_DAYS). */
  tombstoneDays?: number;
  /** Bytes of JSONL per primary shard (default: as with ES_SHARD_TARGET_GB unset). */
  shardTargetBytes?: number;
  /** Primary shards per index at least (default: as with ES_MIN_SHARDS unset). */
  minShards?: number;
  /** Files with fewer rows are built rather than updated (plan.ts UPDATE_MIN_ROWS). */
  updateMinRows?: number;
  progress?: Progress;
  /** Bytes per bulk request (default DEFAULT_FLUSH_BYTES). */
  flushBytes?: number;
  /** Bulk requests in flight across all files (LOAD_CONCURRENCY; default: from the cluster's write threads, loader/write-capacity.ts). */
  concurrency?: number;
  /** Worker threads that parse large files (LOAD_WORKERS; default from the cores: parse-pool.ts `poolSize`); 0: none. */
  workers?: number;
  /** Files from this many bytes are parsed on the workers (default POOL_MIN_FILE_BYTES). */
  workerMinBytes?: number;
  /** Reads `s3://` and `http(s)://` sources (default: an unsigned client, enough for directories and http(s)). */
  store?: ObjectStore;
  /** Stops the load promptly (nothing goes live; what it built is removed): it rejects with the AbortError. */
  signal?: AbortSignal;
}

export interface LoadSummary {
  status: 'loaded' | 'unchanged';
  generation: string;
  bundleId: string;
  /** Files read and indexed (built or updated). */
  files: (FileLoadResult & { startedAt?: number })[];
  /** Every index and what was done with it. */
  indices: IndexResult[];
  counts: Record<string, number>;
  rows: number;
  seconds: number;
  /** Generations deleted after the swap. */
  dropped: string[];
  /** Seconds each step took, in order (plan, files, documents, check, changes, line index, copy, live): where a load's time goes. */
  steps: Record<string, number>;
}

/** Reads a small JSON document whole (catalog, ops), checking it against the manifest. */
async function readDocument(file: BundleFile, signal?: AbortSignal): Promise<Record<string, unknown>> {
  const stream = readLines(file, { signal });
  const parts: string[] = [];
  for await (const batch of stream.batches) for (const { text } of batch) parts.push(text);
  checkIntegrity(file, { ...stream.integrity(), rowCount: file.sizeBytes > 0 ? 1 : 0 });
  try {
    const doc = JSON.parse(parts.join('\n'));
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('not a JSON object');
    return doc;
  } catch (error) {
    throw new LoadError(`invalid JSON document (${(error as Error).message})`, { file: file.path });
  }
}

/** Drains a file nobody indexes, so its hash and count are still checked. */
async function verifyOnly(file: BundleFile, signal?: AbortSignal): Promise<void> {
  const stream = readLines(file, { signal });
  for await (const _ of stream.batches);
  checkIntegrity(file, stream.integrity());
}

function fileFor(bundle: Bundle, names: readonly string[], extension: string): BundleFile | undefined {
  for (const name of names) {
    const file = bundle.files.get(`${name}${extension}`);
    if (file) return file;
  }
  return undefined;
}

/** This load's first-seen instant: now, but always after every kept generation's (clocks of two machines may disagree). */
function firstSeenInstant(kept: readonly GenerationDoc[], now = Date.now()): string {
  const after = Math.max(0, ...kept.map((d) => (toInstant(d.indexedAt)?.ms ?? -1) + 1));
  return toInstant(new Date(Math.max(now, after)).toISOString())!.text;
}

/** Ids per search of the entity lookups (see `lookupEntities`). */
const ENTITY_LOOKUP_IDS = 600;

/** The context documents read of the generation being built (killmails: entities and relations). */
function loadContext(client: Client, cycleStarts: readonly CycleStart[], plans: ReadonlyMap<string, IndexPlan>): LoadContext {
  const entityIndex = plans.get('entities')!.index;
  const relationIndex = plans.get('relations')!.index;
  return {
    cycleStarts,
    // Searches by id: the entities index is refreshed once loaded (see `loadIndex`), and rows kept
    // as doc values have no realtime get. A batch names ~2,000 actors; one search of them runs
    // on one thread of Elasticsearch, parts of ENTITY_LOOKUP_IDS in parallel on all.
    async lookupEntities(ids) {
      const parts: string[][] = [];
      for (let at = 0; at < ids.length; at += ENTITY_LOOKUP_IDS) parts.push(ids.slice(at, at + ENTITY_LOOKUP_IDS));
      const inDocValues = rowsInDocValues(entities.mapping);
      const responses = await Promise.all(parts.map((part) => client.search({ index: entityIndex, ...rowsOfIds(part, inDocValues) })));
      return new Map(responses.flatMap((r) => r.hits.hits).flatMap((hit) => {
        const row = rowOfHit(hit);
        return row ? [[String(row.id), row] as const] : [];
      }));
    },
    // A search: the relations index is refreshed once loaded (see below).
    async lookupNpcKills(ids) {
      if (ids.length === 0) return new Set();
      const response = await client.search({
        index: relationIndex,
        size: 0,
        query: { bool: { filter: [{ terms: { subjectEntityId: ids } }, { term: { predicate: 'killer' } }, { prefix: { objectEntityId: 'enemy:' } }] } },
        aggs: { kills: { terms: { field: 'subjectEntityId', size: ids.length } } },
      });
      const buckets = (response.aggregations?.kills as { buckets: { key: string }[] } | undefined)?.buckets ?? [];
      return new Set(buckets.map((b) => b.key));
    },
    // Counted, not listed: a character's tribes are its `belongs_to` relations' objects (a few).
    async lookupTribes(ids) {
      if (ids.length === 0) return new Map();
      const response = await client.search({
        index: relationIndex,
        size: 0,
        query: { bool: { filter: [{ terms: { subjectEntityId: ids } }, { term: { predicate: 'belongs_to' } }, { prefix: { objectEntityId: 'tribe:' } }] } },
        aggs: { characters: { terms: { field: 'subjectEntityId', size: ids.length }, aggs: { tribes: { terms: { field: 'objectEntityId', size: 10 } } } } },
      });
      type Buckets = { buckets: { key: string; tribes: { buckets: { key: string }[] } }[] };
      const buckets = (response.aggregations?.characters as Buckets | undefined)?.buckets ?? [];
      return new Map(buckets.map((b) => [b.key, b.tribes.buckets.map((t) => t.key)]));
    },
  };
}

/**
 * Loads the bundle a source names. Holds the prefix's load lock from the moment the bundle is
 * open (loader/state.ts): a second loader — a second follower, a rollback — waits, then finds
 * this bundle live and has nothing to do.
 */
export async function loadBundle(source: string, options: LoadOptions): Promise<LoadSummary> {
  const { client, prefix, progress = silentProgress, signal } = options;
  const started = performance.now();
  const bundle = await openBundle(source, { store: options.store ?? createObjectStore(), signal });
  for (const name of REQUIRED_FILES) {
    if (!bundle.files.has(name)) throw new LoadError('required file is not listed in the manifest', { file: name });
  }
  const onWait = (owner: string) => progress.log(`another load holds the lock (${owner}): waiting for it to finish`);
  return withLoadLock(client, prefix, { signal, onWait }, (signal) => loadLocked(bundle, { ...options, signal }, started));
}

/**
 * The load once it holds the lock, step by step: plan each index against the live generation →
 * load the files → read the small documents → check every index → write the generation
 * document and swap it in. Any failure deletes what the load built.
 */
async function loadLocked(bundle: Bundle, options: LoadOptions, started: number): Promise<LoadSummary> {
  const { client, prefix, dataDir, cycleStarts, force = false, keep = DEFAULT_KEEP_GENERATIONS, progress = silentProgress } = options;
  const live = await liveGeneration(client, prefix);
  const schema = indexSchema({ cycleStarts, currentCycle: options.currentCycle }, META_MAPPING);
  if (live && live.manifestSha256 === bundle.manifestSha256 && live.schema === schema && !force) {
    progress.log(`bundle ${bundle.bundleId.slice(0, 12)} is already live as generation ${live.generation}; nothing to do (--force reloads)`);
    return { status: 'unchanged', generation: live.generation, bundleId: bundle.bundleId, files: [], indices: [], counts: live.counts, rows: 0, seconds: 0, dropped: [], steps: {} };
  }

  const generation = newGenerationId(bundle.manifestSha256);
  const kept = await generationDocs(client, prefix);
  const run: LoadRun = {
    bundle,
    options,
    live,
    generation,
    schema,
    indexedAt: firstSeenInstant(kept),
    sequence: Math.max(0, ...kept.map((d) => d.sequence ?? 0)) + 1,
    // A local bundle is copied for /v1/exports; a remote one is served from its store folder.
    exportDir: bundle.local ? exportDirOf(dataDir, prefix, generation) : undefined,
    warnings: [],
    used: new Set(),
    lineDir: lineIndexDir(dataDir, prefix),
    writers: new Map(),
  };
  const steps: Record<string, number> = {};
  let stepStart = performance.now();
  const step = async <T>(name: string, work: Promise<T>): Promise<T> => {
    const value = await work;
    const now = performance.now();
    steps[name] = (now - stepStart) / 1000;
    stepStart = now;
    return value;
  };
  try {
    // Changes a load that never went live wrote (it died before it could take them back).
    await dropChangesAfter(client, changesIndices(prefix), live?.indexedAt ?? INSTANT_MIN);
    const plan = await step('plan', planLoad(run));
    const written = await step('files', loadFiles(run, plan, started));
    const results = written.map((w) => w.result);
    const { catalog, ops } = await step('documents', readDocuments(run));
    const counts = await step('check', checkIndices(run, results));
    const changes = await step('changes', recordChanges(run, plan.plans, written));
    await step('line index', finishLineIndices(run, plan.plans, counts));
    if (run.exportDir) await step('copy', copyBundleFiles(run.exportDir, bundle.files.values(), bundle.manifestBytes));
    const doc = { ...generationDocument(run, plan.planned, counts, catalog, ops, options.currentCycle ?? (await currentCycleOf(client, bundle, results.map((r) => r.index)))), changes };
    options.signal?.throwIfAborted();
    const dropped = await step('live', makeLive(run, doc, keep));
    await pruneChangesBefore(client, Object.values(changes), new Date(Date.now() - (options.tombstoneDays ?? DEFAULT_TOMBSTONE_DAYS) * 86_400_000).toISOString());
    for (const warning of run.warnings) progress.log(`warning: ${warning}`);
    const loaded = results.filter((r): r is IndexResult & FileLoadResult => r.action !== 'reuse' && r.file !== undefined);
    return {
      status: 'loaded',
      generation,
      bundleId: bundle.bundleId,
      files: loaded,
      indices: results,
      counts,
      rows: loaded.reduce((sum, r) => sum + r.rows, 0),
      seconds: (performance.now() - started) / 1000,
      dropped: dropped.map((d) => d.generation),
      steps,
    };
  } catch (error) {
    // Nothing of a failed load may stay behind; the live generation was never touched.
    await deleteGeneration(client, prefix, generation).catch(() => {});
    await dropChangesAfter(client, changesIndices(prefix), live?.indexedAt ?? INSTANT_MIN).catch(() => {});
    for (const writer of run.writers.values()) await writer.discard().catch(() => {});
    if (run.exportDir) await removeExportDir(run.exportDir).catch(() => {});
    throw error;
  }
}

/** What the steps of one load share. */
interface LoadRun {
  bundle: Bundle;
  options: LoadOptions;
  live: GenerationDoc | undefined;
  generation: string;
  schema: string;
  /** The first-seen instant of the rows this load adds. */
  indexedAt: string;
  sequence: number;
  exportDir: string | undefined;
  warnings: string[];
  /** The bundle files some step read (the rest are verified and kept, not indexed). */
  used: Set<string>;
  /** Where line indices live (line-index.ts), and those this load is writing, by index name. */
  lineDir: string;
  writers: Map<string, LineIndexWriter>;
}

interface LoadPlan {
  planned: IndexPlan[];
  plans: Map<string, IndexPlan>;
  estimates: Map<string, ReuseEstimate>;
  /** By index name: the live index's line index an update compares its file with, or why there is none. */
  lineIndices: Map<string, LineIndexState>;
  capacity: Awaited<ReturnType<typeof clusterCapacity>>;
}

/** Each index against the live generation: reuse, update or build (plan.ts), an update only where a sample of the file says it pays. */
async function planLoad(run: LoadRun): Promise<LoadPlan> {
  const { bundle, options, live, generation, schema } = run;
  const { client, prefix, force = false, shardTargetBytes = DEFAULT_SHARD_TARGET_BYTES, minShards = DEFAULT_MIN_SHARDS, signal, progress = silentProgress } = options;
  const capacity = await clusterCapacity(client, (line) => progress.log(`warning: ${line}`));
  const planInput = {
    prefix,
    generation,
    descriptions: INDICES,
    files: bundle.files,
    schema,
    live,
    force,
    shardTargetBytes,
    minShards,
    updateMinRows: options.updateMinRows,
    dataNodes: capacity.dataNodes,
  };
  // Where an update may be planned: over the live index's line index, which the update's own
  // read tells whether it pays (plan.ts `updateStillPays`); without one, a sample of the file
  // says how much of it the live index holds.
  const candidates = planIndices(planInput).filter((p) => p.action === 'update');
  const estimates = new Map<string, ReuseEstimate>();
  const lineIndices: LoadPlan['lineIndices'] = new Map();
  await Promise.all(
    candidates.map(async (p) => {
      const opened = await openLineIndex(lineIndexPath(run.lineDir, p.from!), { index: p.from!, key: live!.contentKeys![p.name]! }, live?.counts[p.name] ?? 0);
      lineIndices.set(p.name, opened);
      if ('header' in opened) return;
      const estimate = await estimateReuse(bundle.files.get(p.file!.path)!, previousIndex(client, p.from!), live?.counts[p.name] ?? 0, signal);
      if (estimate) estimates.set(p.name, estimate);
    }),
  );
  const planned = planIndices({ ...planInput, estimates });
  const described = (p: IndexPlan) => {
    const estimate = estimates.get(p.name);
    const lines = lineIndices.get(p.name);
    if (p.action === 'update' && lines && 'header' in lines) return `${p.name}: update (line index)`;
    const without = lines && 'reason' in lines ? `no line index: ${lines.reason}; ` : '';
    return `${p.name}: ${p.action}${estimate ? ` (${without}~${Math.round(estimate.unchangedShare * 100)} % unchanged)` : ''}`;
  };
  progress.log(`loading ${bundle.local ?? bundle.exportBase} as generation ${generation} (${planned.map(described).join(', ')})`);
  return { planned, plans: new Map(planned.map((p) => [p.name, p])), estimates, lineIndices, capacity };
}

/** Builds, updates or reuses every index (write-index.ts): files side by side, each after the indices its documents read, the longest chains first. */
async function loadFiles(run: LoadRun, { planned, plans, capacity, lineIndices }: LoadPlan, loadStarted: number): Promise<Written[]> {
  const { bundle, options, live, indexedAt, sequence, used } = run;
  const { client, cycleStarts, signal, progress = silentProgress } = options;
  const flushBytes = options.flushBytes ?? DEFAULT_FLUSH_BYTES;
  const slots = new Semaphore(inFlightBudget(capacity, flushBytes, options.concurrency));
  // Workers start only when a file large enough asks for one.
  const workers = poolSize(options.workers);
  const pool = workers > 0 ? new ParsePool(workers, cycleStarts) : undefined;
  const minPooled = options.workerMinBytes ?? POOL_MIN_FILE_BYTES;
  const context = loadContext(client, cycleStarts, plans);
  /** The indices whose documents read this one's (killmails: entities, relations). */
  const dependents = (name: string) => INDICES.filter((d) => (d.dependsOn as readonly string[] | undefined)?.includes(name));
  /** A new line index writer of the index, in place of one a fallback leaves. */
  const lineIndexOf = (plan: IndexPlan) => async () => {
    await run.writers.get(plan.name)?.discard();
    const writer = await LineIndexWriter.create(run.lineDir, plan.index);
    run.writers.set(plan.name, writer);
    return writer;
  };
  /** One index of the load; `signal` stops it when another file fails. */
  const loadIndex = async (description: (typeof INDICES)[number], signal: AbortSignal): Promise<Written> => {
    signal.throwIfAborted();
    const plan = plans.get(description.name)!;
    const file = fileFor(bundle, description.files, '.jsonl');
    const written = await writeIndex({
      ...options,
      plan,
      description,
      file,
      index: plan.index,
      context,
      indexedAt,
      sequence,
      signal,
      flushBytes,
      slots,
      progress,
      pool: file && file.sizeBytes >= minPooled ? pool : undefined,
      lines: lineIndices.get(plan.name),
      lineIndex: lineIndexOf(plan),
      indexOf: (name) => plans.get(name)!.index,
      descriptionOf: (name) => INDICES.find((d) => d.name === name)!,
      liveDocuments: live?.counts[plan.name] ?? 0,
      startedAt: (performance.now() - loadStarted) / 1000,
    });
    // Killmails read the entities and relations of this generation with searches.
    if (plan.action !== 'reuse' && file && !description.derive && dependents(description.name).length > 0) await client.indices.refresh({ index: plan.index });
    return written;
  };
  for (const description of INDICES) {
    const file = fileFor(bundle, description.files, '.jsonl');
    if (file) used.add(file.path);
  }
  const sizeOf = (name: string) => plans.get(name)?.file?.sizeBytes ?? 0;
  const tasks = INDICES.map((description) => ({
    name: description.name as string,
    after: (description.dependsOn ?? []) as readonly string[],
    priority: sizeOf(description.name) + dependents(description.name).reduce((n, d) => n + sizeOf(d.name), 0),
    run: (signal: AbortSignal) => loadIndex(description, signal),
  }));
  const working = planned.filter((p) => p.action !== 'reuse' && p.file).length;
  try {
    const byName = await runTasks(tasks, filesAtOnce(slots.size, working), signal);
    return INDICES.map((d) => byName.get(d.name)!);
  } finally {
    await pool?.close();
  }
}

/** The catalog and the ops documents, read whole and checked; any other file is verified and kept. */
async function readDocuments(run: LoadRun): Promise<{ catalog: Record<string, unknown>; ops: GenerationDoc['ops'] }> {
  const { bundle, options, warnings, used } = run;
  const { signal } = options;
  const catalog = await readDocument(bundle.files.get('catalog.json')!, signal);
  used.add('catalog.json');
  const ops: GenerationDoc['ops'] = {};
  for (const [key, names] of Object.entries(OPS_DOCUMENTS)) {
    const file = fileFor(bundle, names, '');
    if (!file) {
      warnings.push(`no ${names[0]} in this bundle`);
      continue;
    }
    used.add(file.path);
    ops[key as keyof typeof OPS_DOCUMENTS] = await readDocument(file, signal);
  }
  for (const file of bundle.files.values()) {
    if (used.has(file.path)) continue;
    warnings.push(`${file.path} is not a known bundle file: verified and kept, not indexed`);
    await verifyOnly(file, signal);
  }
  signal?.throwIfAborted();
  return { catalog, ops };
}

/** How often an index's count is asked before a wrong one is believed, and how long apart. */
export const COUNT_ASKS = 5;
export const COUNT_ASK_APART_MS = 1000;

/**
 * The documents of `index`, asked again (up to COUNT_ASKS times) while `right` says no: each ask
 * under a preference of its own, so another copy may answer it. A copy on a node cut off from
 * the master serves its reads from before the partition until it notices (seconds).
 */
async function countUntil(client: Client, index: string, right: (documents: number) => boolean): Promise<number> {
  let documents = 0;
  for (let ask = 1; ask <= COUNT_ASKS; ask++) {
    documents = (await client.count({ index, preference: `check-${ask}` })).count;
    if (right(documents) || ask === COUNT_ASKS) break;
    await sleep(COUNT_ASK_APART_MS);
  }
  return documents;
}

/**
 * Readies the indices for search (replicas, refresh) and proves each holds one document per
 * distinct id: every row was acknowledged (load-file checks it) and a repeated id replaces its
 * row, so a built index holds at most its rows and at least one when it has any; an updated one
 * exactly the file's distinct ids. Returns the documents per index.
 */
async function checkIndices(run: LoadRun, results: IndexResult[]): Promise<Record<string, number>> {
  const { client, replicas = DEFAULT_ES_REPLICAS, progress = silentProgress } = run.options;
  const written = results.filter((r) => r.action !== 'reuse').map((r) => r.index);
  const updated = results.filter((r) => r.action === 'update').map((r) => r.index);
  await finishIndices(client, written, replicas, (line) => progress.log(`warning: ${line}`), undefined, updated);
  await setReplicas(client, results.filter((r) => r.action === 'reuse').map((r) => r.index), replicas);
  const counts: Record<string, number> = {};
  for (const result of results) {
    if (result.action === 'reuse') {
      counts[result.name] = result.documents ?? 0;
      continue;
    }
    const rows = result.rows ?? 0;
    const wrong = (documents: number) => (result.action === 'update' ? documents !== result.documents : documents > rows || (rows > 0 && documents === 0));
    const documents = await countUntil(client, result.index, (n) => !wrong(n));
    // Every row was acknowledged: a count that disagrees is the cluster's, not the bundle's (a
    // copy cut off by a partition answers from before the writes), so the next check tries again.
    if (wrong(documents)) throw new LoadError(`${result.index} holds ${documents} documents for ${rows} rows`, { transient: true });
    result.documents = documents;
    counts[result.name] = documents;
  }
  return counts;
}

/**
 * Records the rows each index lost or changed against the live one (loader/changes.ts), as the
 * way that wrote it answers (write-index.ts): what an update over a line index found, else a
 * scan of the live index against the new one. Returns
 * the changes index of each index that keeps them, for the generation document.
 */
async function recordChanges(run: LoadRun, plans: ReadonlyMap<string, IndexPlan>, loaded: Written[]): Promise<Record<string, string>> {
  const { client, prefix, progress = silentProgress } = run.options;
  const changes: Record<string, string> = {};
  // Side by side: each index's diff is a few searches that wait on Elasticsearch.
  const written = await Promise.all(
    INDICES.filter((d) => d.tombstones).map(async (description) => {
      const index = await ensureChangesIndex(client, prefix, description);
      changes[description.name] = index;
      const plan = plans.get(description.name)!;
      if (plan.action === 'reuse' || plan.previous === undefined || plan.previous === plan.index) return 0;
      const rows = await loaded.find((w) => w.result.name === description.name)!.changes(plan.previous);
      const count = await writeChanges(client, { index, description, previous: plan.previous, next: plan.index, rows, at: run.indexedAt });
      if (count) progress.log(`  ${description.name}: ${rows.left.length} rows left, ${rows.changed.length} changed (${index})`);
      return count;
    }),
  );
  // Searchable before the swap: once, for all of them.
  if (written.some((n) => n > 0)) await client.indices.refresh({ index: Object.values(changes) });
  return changes;
}

/**
 * Closes the line index of every index this load wrote, once its document count is proven: a
 * file that repeated ids leaves only the last line of each (last-per-id.ts); one that still does
 * not match its index is dropped (the next update then asks Elasticsearch), saying so.
 */
async function finishLineIndices(run: LoadRun, plans: ReadonlyMap<string, IndexPlan>, counts: Record<string, number>): Promise<void> {
  for (const [name, writer] of run.writers) {
    const plan = plans.get(name)!;
    let header = await writer.close({ index: plan.index, key: plan.key });
    if (header.entries !== counts[name]) header = await keepLastPerId(writer.path, header);
    if (header.entries !== counts[name]) {
      run.warnings.push(`the line index of ${plan.index} holds ${header.entries} lines for ${counts[name]} documents: not kept`);
      await rm(writer.path, { force: true });
    }
  }
  run.writers.clear();
}

/** The generation's document: what it serves, from which bundle, with its counts and small documents. */
function generationDocument(run: LoadRun, planned: IndexPlan[], counts: Record<string, number>, catalog: Record<string, unknown>, ops: GenerationDoc['ops'], currentCycle: number): GenerationDoc {
  const { bundle, generation, schema, indexedAt, sequence, exportDir, warnings } = run;
  const files: GenerationFile[] = [...bundle.files.values()].map(({ path, contentType, sha256, sizeBytes, rowCount, gzip, stored }) => ({
    path,
    storedAs: gzip ? `${path}.gz` : path,
    contentType,
    sha256,
    sizeBytes,
    rowCount,
    ...(bundle.exportBase ? { storedBytes: stored.size, etag: stored.etag } : {}),
  }));
  return {
    generation,
    bundleId: bundle.bundleId,
    manifestSha256: bundle.manifestSha256,
    indices: Object.fromEntries(planned.map((p) => [p.name, p.index])),
    contentKeys: Object.fromEntries(planned.map((p) => [p.name, p.key])),
    docValueRows: INDICES.filter((d) => rowsInDocValues(d.mapping)).map((d) => d.name),
    schema,
    generatedAt: toInstant(bundle.manifest.generatedAt)?.text,
    loadedAt: new Date().toISOString(),
    indexedAt,
    sequence,
    publishedAt: toInstant(bundle.publishedAt)?.text,
    source: bundle.source,
    currentCycle,
    ...(exportDir ? { exportDir } : { exportBase: bundle.exportBase, exportManifest: { storedBytes: bundle.manifestBytes.length, etag: bundle.manifestEtag } }),
    counts,
    files,
    manifest: bundle.manifest,
    catalog,
    ops,
    warnings,
  };
}

/** Writes the generation document, moves every alias to it in one call, records the bundle (src/indices/bundles.ts), and drops the generations no longer kept (the one replaced stays first in line for a rollback). */
async function makeLive(run: LoadRun, doc: GenerationDoc, keep: number): Promise<GenerationDoc[]> {
  const { client, prefix, dataDir } = run.options;
  await createMetaIndex(client, prefix, run.generation);
  await client.index({ index: indexName(prefix, META_INDEX, run.generation), id: run.generation, document: doc, refresh: true });
  await swapAliases(client, prefix, doc);
  await recordBundle(client, prefix, doc);
  const dropped = await pruneGenerations(client, prefix, [run.generation, ...(run.live ? [run.live.generation] : [])], keep, run.options.keepHours);
  for (const old of dropped) await removeExportDir(old.exportDir ?? exportDirOf(dataDir, prefix, old.generation));
  const kept = await generationDocs(client, prefix);
  await pruneLineIndices(run.lineDir, new Set(kept.flatMap((d) => Object.values(d.indices ?? {}))));
  return dropped;
}

/** The manifest's highest cycle, else the highest cycle a document of the generation carries. */
async function currentCycleOf(client: Client, bundle: Bundle, indices: string[]): Promise<number> {
  const manifestCycles = (bundle.manifest.cycles ?? []).filter((c) => Number.isSafeInteger(c));
  if (manifestCycles.length) return Math.max(...manifestCycles);
  const response = await client.search({ index: indices, size: 0, aggs: { top: { max: { field: 'cycle' } } } });
  const top = (response.aggregations?.top as { value: number | null } | undefined)?.value;
  return Math.max(0, top ?? 0);
}
