/**
 * Each generation keeps its own immutable copy of the bundle's files, which /v1/exports
 * serves: a reload never mixes two bundles, and a kept generation still serves its files.
 * Hard links when the bundle is on the same file system (instant, no extra space; published
 * bundles are immutable), a copy otherwise.
 */
import { copyFile, link, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BundleFile } from './bundle.ts';

export function exportDirOf(dataDir: string, prefix: string, generation: string): string {
  return path.join(dataDir, prefix, generation);
}

async function place(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch {
    await copyFile(from, to);
  }
}

/** Copies the listed files (as published: plain or `.gz`) and the exact manifest bytes. */
export async function copyBundleFiles(dir: string, files: Iterable<BundleFile>, manifestBytes: Buffer): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  for (const file of files) await place(file.location, path.join(dir, path.basename(file.location)));
  await writeFile(path.join(dir, 'manifest.json'), manifestBytes);
}

export async function removeExportDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
