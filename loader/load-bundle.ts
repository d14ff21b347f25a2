/**
 * Loads a bundle as a new generation and makes it live.
 *
 * Order: open and check the manifest → skip if this bundle is already live (unless forced)
 * → create the generation's indices → stream every JSONL file into its index, checking
 * hashes and counts → check the small JSON documents → refresh and prove each index holds
 * one document per distinct id → keep an immutable copy of the files → write the generation
 * document → move all aliases in one call → drop generations older than the previous one.
 * Any failure removes what this load built; the live generation is never touched before
 * the swap.
 */
import { readFile } from 'node:fs/promises';
import type { Client } from '@elastic/elasticsearch';
import type { CycleStart } from '../src/config.ts';
import { INDICES, OPS_DOCUMENTS, indexSchema } from '../src/indices/all.ts';
import { type LoadContext, type Row, documentId } from '../src/indices/description.ts';
import { type GenerationDoc, type GenerationFile, META_INDEX, META_MAPPING, indexName, newGenerationId } from '../src/indices/generation.ts';
import { toInstant } from '../src/indices/instant.ts';
import { type ObjectStore, createObjectStore } from '../src/store/object-store.ts';
import { type Bundle, type BundleFile, openBundle } from './bundle.ts';
import { LoadError } from './errors.ts';
import { copyBundleFiles, exportDirOf, removeExportDir } from './export-copy.ts';
import { createGenerationIndices, deleteGeneration, dropGenerations, finishGenerationIndices, liveGeneration, swapAliases } from './generations.ts';
import { type FileLoadResult, checkIntegrity, loadJsonlFile } from './load-file.ts';
import { type Progress, silentProgress } from './progress.ts';
import { readLines } from './read-lines.ts';

/** Files a bundle cannot be served without. */
const REQUIRED_FILES = ['catalog.json', 'entities.jsonl'];

export interface LoadOptions {
  client: Client;
  prefix: string;
  dataDir: string;
  cycleStarts: readonly CycleStart[];
  /** Overrides the generation's current cycle (else manifest `cycles`, else the data). */
  currentCycle?: number;
  /** Load even when this bundle is already live. */
  force?: boolean;
  /** Replicas once loaded (0 on a single node). */
  replicas?: number;
  progress?: Progress;
  flushBytes?: number;
  concurrency?: number;
  /** Reads `s3://` and `http(s)://` sources (default: an unsigned client, enough for directories and http(s)). */
  store?: ObjectStore;
  /** Stops the load promptly (nothing goes live; what it built is removed). */
  signal?: AbortSignal;
}

export interface LoadSummary {
  status: 'loaded' | 'unchanged';
  generation: string;
  bundleId: string;
  files: FileLoadResult[];
  counts: Record<string, number>;
  rows: number;
  seconds: number;
  /** Generations deleted after the swap. */
  dropped: string[];
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

export async function loadBundle(source: string, options: LoadOptions): Promise<LoadSummary> {
  const { client, prefix, dataDir, cycleStarts, force = false, replicas = 0, progress = silentProgress, signal } = options;
  const started = performance.now();
  const bundle = await openBundle(source, { store: options.store ?? createObjectStore(), signal });
  for (const name of REQUIRED_FILES) {
    if (!bundle.files.has(name)) throw new LoadError('required file is not listed in the manifest', { file: name });
  }
  const live = await liveGeneration(client, prefix);
  const schema = indexSchema({ cycleStarts, currentCycle: options.currentCycle }, META_MAPPING);
  if (live && live.manifestSha256 === bundle.manifestSha256 && live.schema === schema && !force) {
    progress.log(`bundle ${bundle.bundleId.slice(0, 12)} is already live as generation ${live.generation}; nothing to do (--force reloads)`);
    return { status: 'unchanged', generation: live.generation, bundleId: bundle.bundleId, files: [], counts: live.counts, rows: 0, seconds: 0, dropped: [] };
  }

  const generation = newGenerationId(bundle.manifestSha256);
  // A local bundle is copied for /v1/exports; a remote one is served from its store folder.
  const exportDir = bundle.local ? exportDirOf(dataDir, prefix, generation) : undefined;
  progress.log(`loading ${bundle.local ?? bundle.exportBase} as generation ${generation}`);
  const warnings: string[] = [];
  const used = new Set<string>();
  try {
    await createGenerationIndices(client, prefix, generation);
    const entityIndex = indexName(prefix, 'entities', generation);
    const context: LoadContext = {
      cycleStarts,
      npcKillmails: new Set(),
      // Realtime gets: the entities of this generation are readable before any refresh.
      async lookupEntities(ids) {
        if (ids.length === 0) return new Map();
        const response = await client.mget<{ row: Row }>({ index: entityIndex, ids: ids.map(documentId) });
        return new Map(response.docs.flatMap((d) => ('found' in d && d.found && d._source ? [[String(d._source.row.id), d._source.row] as const] : [])));
      },
    };
    const results: FileLoadResult[] = [];
    for (const description of INDICES) {
      const file = fileFor(bundle, description.files, '.jsonl');
      if (!file) continue;
      used.add(file.path);
      const index = indexName(prefix, description.name, generation);
      const bar = progress.file(file.path, file.rowCount);
      const result = await loadJsonlFile({ ...options, file, index, description, context, progress: bar });
      bar.done(`  ${file.path}: ${result.rows} rows in ${result.seconds.toFixed(1)} s`);
      results.push(result);
    }

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

    await finishGenerationIndices(client, prefix, generation, replicas);
    const counts: Record<string, number> = {};
    for (const description of INDICES) {
      const index = indexName(prefix, description.name, generation);
      const documents = (await client.count({ index })).count;
      // Every row was acknowledged (load-file checks it) and a repeated id replaces its row, so an
      // index holds one document per distinct id: at most its rows, at least one when it has any.
      const result = results.find((r) => r.index === index);
      const rows = result?.rows ?? 0;
      if (documents > rows || (rows > 0 && documents === 0)) throw new LoadError(`${index} holds ${documents} documents for ${rows} rows`);
      if (result) result.documents = documents;
      counts[description.name] = documents;
    }

    if (exportDir) await copyBundleFiles(exportDir, bundle.files.values(), bundle.manifestBytes);
    const manifestCycles = (bundle.manifest.cycles ?? []).filter((c) => Number.isSafeInteger(c));
    const currentCycle = options.currentCycle ?? (manifestCycles.length ? Math.max(...manifestCycles) : Math.max(0, ...results.map((r) => r.maxCycle)));
    const files: GenerationFile[] = [...bundle.files.values()].map(({ path, contentType, sha256, sizeBytes, rowCount, gzip, stored }) => ({
      path,
      storedAs: gzip ? `${path}.gz` : path,
      contentType,
      sha256,
      sizeBytes,
      rowCount,
      ...(bundle.exportBase ? { storedBytes: stored.size, etag: stored.etag } : {}),
    }));
    const doc: GenerationDoc = {
      generation,
      bundleId: bundle.bundleId,
      manifestSha256: bundle.manifestSha256,
      schema,
      generatedAt: toInstant(bundle.manifest.generatedAt)?.text,
      loadedAt: new Date().toISOString(),
      currentCycle,
      ...(exportDir ? { exportDir } : { exportBase: bundle.exportBase, exportManifest: { storedBytes: bundle.manifestBytes.length, etag: bundle.manifestEtag } }),
      counts,
      files,
      manifest: bundle.manifest,
      catalog,
      ops,
      warnings,
    };
    await client.index({ index: indexName(prefix, META_INDEX, generation), id: generation, document: doc, refresh: true });

    await swapAliases(client, prefix, generation);
    const keep = new Set([generation, ...(live ? [live.generation] : [])]);
    const dropped = await dropGenerations(client, prefix, keep);
    for (const old of dropped) await removeExportDir(exportDirOf(dataDir, prefix, old));
    for (const warning of warnings) progress.log(`warning: ${warning}`);
    const rows = results.reduce((sum, r) => sum + r.rows, 0);
    return { status: 'loaded', generation, bundleId: bundle.bundleId, files: results, counts, rows, seconds: (performance.now() - started) / 1000, dropped };
  } catch (error) {
    // Nothing of a failed load may stay behind; the live generation was never touched.
    await deleteGeneration(client, prefix, generation).catch(() => {});
    if (exportDir) await removeExportDir(exportDir).catch(() => {});
    throw error;
  }
}
