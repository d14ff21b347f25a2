/**
 * `npm run load -- --rollback [generation]`: makes a kept generation live again in one alias
 * update (the previous one by default), under the load lock; the rows it recorded as left or
 * changed are taken back (loader/changes.ts). Nothing is rebuilt or deleted: the
 * generation rolled back from stays kept until a later load prunes it, and its bundle is
 * recorded so a follower does not load it again — it waits for a newer one.
 */
import type { Client } from '@elastic/elasticsearch';
import type { GenerationDoc } from '../src/indices/generation.ts';
import { LoadError } from './errors.ts';
import { dropChangesAfter } from './changes.ts';
import { INSTANT_MIN } from '../src/time/instant.ts';
import { changesIndices } from '../src/indices/changes.ts';
import { generationDocs, indicesOf, liveGeneration, swapAliases } from './generations.ts';
import { recordRollback, withLoadLock } from './state.ts';

export interface RollbackResult {
  from: GenerationDoc;
  to: GenerationDoc;
}

export async function rollback(client: Client, prefix: string, target?: string, signal?: AbortSignal): Promise<RollbackResult> {
  return withLoadLock(client, prefix, { signal }, async () => {
    const live = await liveGeneration(client, prefix);
    if (!live) throw new LoadError('nothing is live: there is no generation to roll back from');
    const others = (await generationDocs(client, prefix)).filter((d) => d.generation !== live.generation);
    const to = target === undefined ? others[0] : others.find((d) => d.generation === target);
    if (!to) {
      const kept = others.map((d) => d.generation).join(', ') || 'none';
      throw new LoadError(target === undefined ? 'no other generation is kept to roll back to (KEEP_GENERATIONS)' : `generation ${target} is not kept (kept besides the live one: ${kept})`);
    }
    const indices = indicesOf(prefix, to);
    const exists = await client.indices.exists({ index: indices, allow_no_indices: false, expand_wildcards: 'none' });
    if (!exists) throw new LoadError(`generation ${to.generation} has lost indices; it cannot be served`);
    await swapAliases(client, prefix, to);
    // What the generation rolled back from recorded as left or changed is not so any more.
    await dropChangesAfter(client, changesIndices(prefix), to.indexedAt ?? INSTANT_MIN);
    await recordRollback(client, prefix, { manifestSha256: live.manifestSha256, bundleId: live.bundleId, generation: live.generation, at: new Date().toISOString() });
    return { from: live, to };
  });
}
