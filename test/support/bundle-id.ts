/** A bundle directory's id as the loader names it, from its files: the SHA-256 of its `manifest.json`. */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

export async function bundleIdOf(dir: string): Promise<string> {
  return createHash('sha256').update(await readFile(path.join(dir, 'manifest.json'))).digest('hex');
}
