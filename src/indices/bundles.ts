/**
 * The bundle record (`<prefix>-bundles`, never aliased, never pruned): one document per load that
 * went live (its id the generation's), written by the loader as the generation goes live and
 * kept after the generation is dropped. So `/v1/bundles` lists every bundle loaded here, a
 * bundle no longer kept is told apart from one never seen (410, not 404), and its manifest
 * stays citable.
 */
import mapping from '../../mappings/bundles.json' with { type: 'json' };
import type { MappingFile } from './description.ts';
import type { GenerationDoc } from './generation.ts';

export const BUNDLES_INDEX = 'bundles';
export const BUNDLES_MAPPING = mapping as MappingFile;

export const bundlesIndex = (prefix: string): string => `${prefix}-${BUNDLES_INDEX}`;

export type BundleRecord = Pick<GenerationDoc, 'generation' | 'bundleId' | 'manifestSha256' | 'generatedAt' | 'publishedAt' | 'loadedAt' | 'source' | 'counts' | 'manifest' | 'catalog'>;

/** A generation's record, from its document. */
export function bundleRecordOf(doc: GenerationDoc): BundleRecord {
  const { generation, bundleId, manifestSha256, generatedAt, publishedAt, loadedAt, source, counts, manifest, catalog } = doc;
  return { generation, bundleId, manifestSha256, generatedAt, publishedAt, loadedAt, source, counts, manifest, catalog };
}
