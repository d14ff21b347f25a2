/**
 * Loader benchmark: generates a bundle of `--scale N` (N × 100 entities), then measures in one
 * run (a) the baseline — streaming every file (gunzip, split, JSON.parse, row → document) with
 * no Elasticsearch — and (b) the real load into Elasticsearch. Reports rows/s of both, their
 * ratio (what indexing costs over reading), and the peak RSS of this process.
 *
 *   npm run bench -- load --scale 400     # ≈ 1.1 M rows
 */
import path from 'node:path';
import { ensureBundle } from '../generator/write-bundle.ts';
import { loadConfig } from '../src/config.ts';
import { INDICES } from '../src/indices/all.ts';
import type { LoadContext } from '../src/indices/description.ts';
import { createClient } from '../src/search/client.ts';
import { openBundle } from '../loader/bundle.ts';
import { loadBundle } from '../loader/load-bundle.ts';
import { readLines } from '../loader/read-lines.ts';
import { provideElasticsearch } from '../scripts/elasticsearch.ts';

export interface LoadBenchResult {
  rows: number;
  baselineRowsPerSecond: number;
  loadRowsPerSecond: number;
  /** Load time over baseline time: how many times slower than just reading the bundle. */
  ratio: number;
  peakRssMb: number;
}

async function readOnly(dir: string): Promise<{ rows: number; seconds: number }> {
  const bundle = await openBundle(dir);
  const context: LoadContext = { cycleStarts: loadConfig().cycleStarts, npcKillmails: new Set() };
  const started = performance.now();
  let rows = 0;
  for (const description of INDICES) {
    const file = description.files.map((f) => bundle.files.get(`${f}.jsonl`)).find(Boolean);
    if (!file) continue;
    for await (const { text } of readLines(file.location, file.gzip).lines) {
      if (!text.trim()) continue;
      description.toDocument(JSON.parse(text), context);
      rows += 1;
    }
  }
  return { rows, seconds: (performance.now() - started) / 1000 };
}

export async function benchLoad(scale: number, log: (line: string) => void): Promise<LoadBenchResult> {
  const config = loadConfig();
  const dir = await ensureBundle(path.join(config.cacheDir, `bench-bundle-scale-${scale}`), { scale }, log);
  const { url } = await provideElasticsearch(config, log);
  const baseline = await readOnly(dir);
  log(`baseline (read + parse + documents, no ES): ${baseline.rows} rows in ${baseline.seconds.toFixed(1)} s`);
  const client = createClient(url, 300_000);
  const summary = await loadBundle(dir, { client, prefix: 'bench', dataDir: path.join(config.cacheDir, 'bench-data'), cycleStarts: config.cycleStarts, force: true });
  await client.close();
  log(`load into Elasticsearch: ${summary.rows} rows in ${summary.seconds.toFixed(1)} s`);
  return {
    rows: summary.rows,
    baselineRowsPerSecond: Math.round(baseline.rows / baseline.seconds),
    loadRowsPerSecond: Math.round(summary.rows / summary.seconds),
    ratio: Number((summary.seconds / baseline.seconds).toFixed(2)),
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  };
}
