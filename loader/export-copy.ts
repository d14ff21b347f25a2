/**
 * Each generation keeps its own immutable copy of the bundle's files, which /v1/exports
 * serves: a reload never mixes two bundles, and a kept generation still serves its files.
 * A real copy (a reflink where the file system offers one), not a hard link: a bundle
 * rewritten in place would otherwise change the bytes behind a served ETag.
 */
import { constants } from 'node:fs';
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BundleFile } from './bundle.ts';

export function exportDirOf(dataDir: string, prefix: string, generation: string): string {
  return path.join(dataDir, prefix, generation);
}

/** Copies the listed files (as published: plain or `.gz`) and the exact manifest bytes. */
export async function copyBundleFiles(dir: string, files: Iterable<BundleFile>, manifestBytes: Buffer): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  for (const file of files) await copyFile(file.location, path.join(dir, path.basename(file.location)), constants.COPYFILE_FICLONE);
  await writeFile(path.join(dir, 'manifest.json'), manifestBytes);
}

export async function removeExportDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
