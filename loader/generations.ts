/**
 * Generation bookkeeping in Elasticsearch: create or clone a generation's indices, finish them
 * for search, read the live generation and the kept ones, move every alias in one
 * `updateAliases` call, and drop what no kept generation reads.
 *
 * A concrete index may be read by several generations (a reused index), so nothing is deleted
 * by generation name alone: pruning keeps every index a kept generation document names.
 */
import type { Client } from '@elastic/elasticsearch';
import { INDICES } from '../src/indices/all.ts';
import { BUNDLES_MAPPING, bundleRecordOf, bundlesIndex } from '../src/indices/bundles.ts';
import { changesIndexPattern } from '../src/indices/changes.ts';
import type { MappingFile } from '../src/indices/description.ts';
import { type GenerationDoc, META_INDEX, META_MAPPING, aliasName, concreteIndex, indexName, parseIndexName } from '../src/indices/generation.ts';

/**
 * Settings of an index being loaded: no replicas, an asynchronous translog (a failed load is
 * deleted and run again), and a refresh every LOADING_REFRESH rather than none. Without refreshes
 * the documents wait in the indexing buffer (a tenth of the heap) until the final refresh writes
 * them all as segments on one thread while the other cores idle, the larger the heap the longer.
 * Refreshed on the way, the segments are written beside the indexing.
 */
const LOADING_REFRESH = '10s';
const LOADING = { number_of_replicas: 0, refresh_interval: LOADING_REFRESH, 'translog.durability': 'async', 'merge.scheduler.auto_throttle': false } as const;

/**
 * Runs a create (or clone) of an index of this load's own generation, whose name no one else
 * uses: an index of that name was made by this very call, whose answer was lost and which the
 * client sent again (a node dying mid-request), so "already exists" is success. (The bundle
 * record is made the same way: by whichever load is first.)
 */
async function createOnce(client: Client, index: string, create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (error) {
    if ((error as { body?: { error?: { type?: string } } }).body?.error?.type !== 'resource_already_exists_exception') throw error;
    await client.cluster.health({ index, wait_for_active_shards: 1, timeout: '60s' });
  }
}

/** Creates an empty index tuned for bulk loading. */
export async function createIndex(client: Client, index: string, mapping: MappingFile, shards = 1): Promise<void> {
  await createOnce(client, index, () =>
    client.indices.create({
      index,
      settings: { ...mapping.settings, number_of_shards: shards, ...LOADING },
      mappings: mapping.mappings as never,
    }),
  );
}

/**
 * Clones a finished index (write-blocked, see `finishIndices`): Elasticsearch hard-links its
 * segments, so the copy costs seconds whatever its size, and is then loaded like a new index.
 */
export async function cloneIndex(client: Client, from: string, to: string): Promise<void> {
  await createOnce(client, to, () => client.indices.clone({ index: from, target: to, settings: { ...LOADING, 'index.blocks.write': null } as never, wait_for_active_shards: 1 }));
}

/** Records a generation that went live in the bundle record (src/indices/bundles.ts), made on first use. */
export async function recordBundle(client: Client, prefix: string, doc: GenerationDoc): Promise<void> {
  const index = bundlesIndex(prefix);
  await createOnce(client, index, () => client.indices.create({ index, settings: BUNDLES_MAPPING.settings, mappings: BUNDLES_MAPPING.mappings as never }));
  await client.index({ index, id: doc.generation, document: bundleRecordOf(doc), refresh: true });
}

/** The meta index of a generation, made for its one document. */
export async function createMetaIndex(client: Client, prefix: string, generation: string): Promise<string> {
  const index = indexName(prefix, META_INDEX, generation);
  await createOnce(client, index, () => client.indices.create({ index, settings: META_MAPPING.settings, mappings: META_MAPPING.mappings as never }));
  return index;
}

/**
 * Readies loaded indices for search: replicas and refresh restored, every document visible and
 * flushed, then write-blocked (no reader ever writes; a later load may clone them). With
 * replicas, waits until they are allocated (green) — up to `greenTimeout`, after which the load
 * goes on: every primary is active and the replicas keep recovering.
 */
export async function finishIndices(client: Client, indices: string[], replicas: number, warn: (line: string) => void, greenTimeout = '60s', settled: string[] = []): Promise<void> {
  if (indices.length === 0) return;
  await client.indices.putSettings({ index: indices, settings: { refresh_interval: '1s', number_of_replicas: replicas, 'translog.durability': 'request' } });
  await client.indices.refresh({ index: indices });
  await client.indices.flush({ index: indices });
  await client.indices.addBlock({ index: indices.join(','), block: 'write' });
  if (settled.length) await settleMerges(client, settled, warn);
  if (replicas > 0) {
    const health = await client.cluster.health({ index: indices, wait_for_status: 'green', timeout: greenTimeout });
    if (health.timed_out) warn(`replicas of ${indices.length} indices not all allocated after ${greenTimeout} (cluster ${health.status}); going on`);
  }
}

/** How long a load waits for the merges of its updated indices before it makes them live anyway. */
const MERGE_WAIT_MS = 30_000;

/**
 * Waits until no merge runs on these indices (the updated ones: `finishIndices`'s `settled`), then
 * refreshes them once more, so that the generation goes live on the segments it will keep. A merge
 * that ends after the swap opens a new reader at the next refresh: the shard request cache the
 * gateways warmed for the new generation (src/search/search-service.ts WARM_REQUESTS) is then
 * empty again, and queries meanwhile share the cores with the merge. After an update only its
 * few new segments merge: a moment. A full build's merges take minutes on two cores (a 2 M-event
 * index: more than 120 s after its last write): not waited for — builds are rare, exports are not.
 */
export async function settleMerges(client: Client, indices: string[], warn: (line: string) => void, maxMs = MERGE_WAIT_MS): Promise<void> {
  const started = Date.now();
  for (;;) {
    const stats = await client.indices.stats({ index: indices, metric: 'merge' });
    if ((stats._all.total?.merges?.current ?? 0) === 0) break;
    if (Date.now() - started > maxMs) {
      warn(`merges still running on the new indices after ${maxMs / 1000} s; going live meanwhile`);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await client.indices.refresh({ index: indices });
}

/** Sets the replica count of indices reused from an earlier generation (ES_REPLICAS may have changed). */
export async function setReplicas(client: Client, indices: string[], replicas: number): Promise<void> {
  if (indices.length) await client.indices.putSettings({ index: indices, settings: { number_of_replicas: replicas } });
}

/** The live generation's document, or undefined when nothing is live. */
export async function liveGeneration(client: Client, prefix: string): Promise<GenerationDoc | undefined> {
  const response = await client.search<GenerationDoc>({ index: aliasName(prefix, META_INDEX), size: 1 }, { ignore: [404] });
  return response.hits?.hits[0]?._source;
}

/** Every generation document under this prefix, newest first. */
export async function generationDocs(client: Client, prefix: string): Promise<GenerationDoc[]> {
  const response = await client.search<GenerationDoc>(
    { index: `${prefix}-${META_INDEX}-*`, size: 1000, sort: [{ generation: 'desc' }], expand_wildcards: 'all' },
    { ignore: [404] },
  );
  return (response.hits?.hits ?? []).flatMap((hit) => (hit._source ? [hit._source] : []));
}

/** Every index a generation reads: its row-fed indices and its own meta index. */
export function indicesOf(prefix: string, doc: Pick<GenerationDoc, 'generation' | 'indices'>): string[] {
  return [...INDICES.map(({ name }) => concreteIndex(prefix, doc, name)), indexName(prefix, META_INDEX, doc.generation)];
}

/** Points every alias at `doc`'s indices at once: readers see the old set or the new one, never a mix. */
export async function swapAliases(client: Client, prefix: string, doc: Pick<GenerationDoc, 'generation' | 'indices'>): Promise<void> {
  const names = [...INDICES.map(({ name }) => name), META_INDEX];
  const current = await client.indices.getAlias({ name: names.map((n) => aliasName(prefix, n)) }, { ignore: [404] });
  const actions: object[] = [];
  for (const [index, { aliases }] of Object.entries(current ?? {})) {
    for (const alias of Object.keys(aliases ?? {})) {
      if (parseIndexName(prefix, index)) actions.push({ remove: { index, alias } });
    }
  }
  for (const name of names) {
    const index = name === META_INDEX ? indexName(prefix, META_INDEX, doc.generation) : concreteIndex(prefix, doc, name);
    actions.push({ add: { index, alias: aliasName(prefix, name) } });
  }
  await client.indices.updateAliases({ actions: actions as never });
}

const OWN_NAMES = new Set<string>([...INDICES.map(({ name }) => name), META_INDEX]);

/**
 * Concrete indices of this prefix: generation-named, of a known index (so a prefix `reg` never
 * touches `reg-x-…` of another prefix `reg-x`, nor the state index).
 */
async function prefixIndices(client: Client, prefix: string): Promise<string[]> {
  const indices = await client.indices.get({ index: `${prefix}-*`, expand_wildcards: 'all', filter_path: '*.settings.index.provided_name' }, { ignore: [404] });
  return Object.keys(indices ?? {}).filter((name) => OWN_NAMES.has(parseIndexName(prefix, name)?.index ?? ''));
}

/**
 * Keeps `first` (the live generation, then the one it replaced) and the newest others up to
 * `keep` in all, and any loaded less than `keepHours` ago, and deletes the rest: their documents, and every index of this prefix that no
 * kept generation reads (which also sweeps what a load that crashed left behind). Returns the
 * generations dropped.
 */
export async function pruneGenerations(client: Client, prefix: string, first: readonly string[], keep: number, keepHours?: number, now = Date.now()): Promise<GenerationDoc[]> {
  const docs = await generationDocs(client, prefix);
  const ranked = [...first.flatMap((id) => docs.filter((d) => d.generation === id)), ...docs.filter((d) => !first.includes(d.generation))];
  const young = (d: GenerationDoc) => keepHours !== undefined && now - Date.parse(d.loadedAt) < keepHours * 3_600_000;
  const kept = ranked.filter((d, i) => i < Math.max(1, keep) || young(d));
  const keptIds = new Set(kept.map((d) => d.generation));
  const needed = new Set(kept.flatMap((d) => indicesOf(prefix, d)));
  const unused = (await prefixIndices(client, prefix)).filter((index) => !needed.has(index));
  if (unused.length) await client.indices.delete({ index: unused, ignore_unavailable: true });
  return docs.filter((d) => !keptIds.has(d.generation));
}

/** Deletes the indices this generation created (a failed load's half-built set); reused ones belong to others. */
export async function deleteGeneration(client: Client, prefix: string, generation: string): Promise<void> {
  const own = (await prefixIndices(client, prefix)).filter((index) => parseIndexName(prefix, index)?.generation === generation);
  if (own.length) await client.indices.delete({ index: own, ignore_unavailable: true });
}

/** Deletes every generation of this prefix, live or not, and its changes (benchmarks and tests start clean with it). */
export async function deleteAllGenerations(client: Client, prefix: string): Promise<void> {
  const own = await prefixIndices(client, prefix);
  if (own.length) await client.indices.delete({ index: own, ignore_unavailable: true });
  // By name: Elasticsearch refuses to delete by a wildcard (action.destructive_requires_name).
  const changes = Object.keys((await client.indices.get({ index: changesIndexPattern(prefix), expand_wildcards: 'all', filter_path: '*.settings.index.provided_name' }, { ignore: [404] })) ?? {});
  if (changes.length) await client.indices.delete({ index: changes, ignore_unavailable: true });
}
