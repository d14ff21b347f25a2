/**
 * Generation bookkeeping in Elasticsearch: create a generation's indices, read the live
 * generation, move every alias to a new generation in one `updateAliases` call, and drop
 * generations that are no longer kept.
 */
import type { Client } from '@elastic/elasticsearch';
import { INDICES } from '../src/indices/all.ts';
import type { MappingFile } from '../src/indices/description.ts';
import { type GenerationDoc, META_INDEX, META_MAPPING, aliasName, indexName, parseIndexName } from '../src/indices/generation.ts';

/** Every index of a generation: the row-fed ones and the generation document's own. */
const ALL_INDICES: readonly { name: string; mapping: MappingFile }[] = [
  ...INDICES,
  { name: META_INDEX, mapping: META_MAPPING },
];

/**
 * Creates empty indices for a generation, tuned for bulk loading: no replicas, no refresh,
 * and an asynchronous translog (a crash mid-load loses nothing that matters: a failed load
 * is deleted and run again; durability is restored before the swap).
 */
export async function createGenerationIndices(client: Client, prefix: string, generation: string): Promise<void> {
  for (const { name, mapping } of ALL_INDICES) {
    await client.indices.create({
      index: indexName(prefix, name, generation),
      settings: { ...mapping.settings, number_of_replicas: 0, refresh_interval: '-1', 'translog.durability': 'async' },
      mappings: mapping.mappings as never,
    });
  }
}

/** Restores search settings after the load and makes every document visible. */
export async function finishGenerationIndices(client: Client, prefix: string, generation: string, replicas: number): Promise<void> {
  const index = ALL_INDICES.map(({ name }) => indexName(prefix, name, generation));
  await client.indices.putSettings({ index, settings: { refresh_interval: '1s', number_of_replicas: replicas, 'translog.durability': 'request' } });
  await client.indices.refresh({ index });
  await client.indices.flush({ index });
}

/** The live generation's document, or undefined when nothing is live. */
export async function liveGeneration(client: Client, prefix: string): Promise<GenerationDoc | undefined> {
  const response = await client.search<GenerationDoc>({ index: aliasName(prefix, META_INDEX), size: 1 }, { ignore: [404] });
  return response.hits?.hits[0]?._source;
}

/** Points every alias at `generation` at once: readers see the old set or the new one, never a mix. */
export async function swapAliases(client: Client, prefix: string, generation: string): Promise<void> {
  const names = ALL_INDICES.map(({ name }) => name);
  const current = await client.indices.getAlias({ name: names.map((n) => aliasName(prefix, n)) }, { ignore: [404] });
  const actions: object[] = [];
  for (const [index, { aliases }] of Object.entries(current ?? {})) {
    for (const alias of Object.keys(aliases ?? {})) {
      if (parseIndexName(prefix, index)) actions.push({ remove: { index, alias } });
    }
  }
  for (const name of names) actions.push({ add: { index: indexName(prefix, name, generation), alias: aliasName(prefix, name) } });
  await client.indices.updateAliases({ actions: actions as never });
}

/** Generations that have at least one index under this prefix. */
export async function listGenerations(client: Client, prefix: string): Promise<Map<string, string[]>> {
  const indices = await client.indices.get({ index: `${prefix}-*`, expand_wildcards: 'all' }, { ignore: [404] });
  const generations = new Map<string, string[]>();
  for (const name of Object.keys(indices ?? {})) {
    const parsed = parseIndexName(prefix, name);
    if (parsed) generations.set(parsed.generation, [...(generations.get(parsed.generation) ?? []), name]);
  }
  return generations;
}

/** Deletes every generation except those kept; returns the deleted generation ids. */
export async function dropGenerations(client: Client, prefix: string, keep: ReadonlySet<string>): Promise<string[]> {
  const dropped: string[] = [];
  for (const [generation, indices] of await listGenerations(client, prefix)) {
    if (keep.has(generation)) continue;
    await client.indices.delete({ index: indices, ignore_unavailable: true });
    dropped.push(generation);
  }
  return dropped;
}

/** Deletes one generation's indices (a failed load's half-built set). */
export async function deleteGeneration(client: Client, prefix: string, generation: string): Promise<void> {
  const indices = (await listGenerations(client, prefix)).get(generation);
  if (indices) await client.indices.delete({ index: indices, ignore_unavailable: true });
}
