/**
 * The bundle the gateway serves when run from this checkout (`npm start`, `npm run fuzz`):
 * BUNDLE_DIR, else the generated sample (deterministic, so it is the same bundle every time),
 * loaded unless it is already the live generation of the configured prefix.
 */
import path from 'node:path';
import { ensureBundle } from '../generator/write-bundle.ts';
import type { Config } from '../src/config.ts';
import { createClient } from '../src/search/client.ts';
import { loadBundle } from '../loader/load-bundle.ts';
import { createProgress } from '../loader/progress.ts';
import { formatSummary } from '../loader/summary.ts';

/** Scale of the sample bundle served without BUNDLE_DIR. */
export const SAMPLE_SCALE = 3;

/** Writes the sample when needed and loads the served bundle into `esUrl`; returns the bundle directory. */
export async function loadServedBundle(config: Readonly<Config>, esUrl: string, write: (line: string) => void): Promise<string> {
  const bundleDir = config.bundleDir ?? (await ensureBundle(path.join(config.cacheDir, `sample-bundle-scale-${SAMPLE_SCALE}`), { scale: SAMPLE_SCALE }, write));
  const client = createClient(esUrl, 120_000);
  try {
    const summary = await loadBundle(bundleDir, {
      client,
      prefix: config.indexPrefix,
      dataDir: config.dataDir,
      cycleStarts: config.cycleStarts,
      currentCycle: config.currentCycle,
      progress: createProgress({ tty: Boolean(process.stderr.isTTY), write }),
    });
    write(formatSummary(summary));
  } finally {
    await client.close();
  }
  return bundleDir;
}
