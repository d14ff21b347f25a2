/**
 * Loader benchmark: the loader against the physical limit of the cluster under it, measured in
 * the same run on the same bundle.
 *
 * 1. Capture: the bundle is loaded once (untimed) while the client's own `request` diagnostic
 *    event records every `_bulk` body the loader sends: the loader's own documents, exactly.
 * 2. Loader: `loader/cli.ts --json` loads the bundle in a process of its own (timed; its peak
 *    RSS is its own), reporting each file's seconds and the process's peak RSS after each file.
 * 3. Raw `_bulk`: the captured bodies are sent again, pre-built, joined into ~5 MB requests and
 *    read into memory first, two in flight, into fresh indices with the same mappings and load
 *    settings (createIndex: 0 replicas, a refresh every 10 s, async translog), then finished like
 *    a load (settings restored, refresh, flush).
 *
 * 4. Raw `_bulk` beside the floor: the same replay again, each file's while a worker thread does
 *    the work no loader can skip on that file (read, gunzip, check, parse and hash every line;
 *    load-floor.ts) on the same cores. Raw over that is the most a loader can reach here.
 *
 * Reported per file and in total: rows/s of both and their ratio (loader / raw), and the floor's
 * bound (raw / raw beside the floor). On a cluster of many write threads the loader loads a few
 * files side by side (loader/write-capacity.ts), so its seconds per file overlap and share the
 * cores: the total is the comparison that holds.
 */
import { request } from 'node:http';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { ensureBundle } from '../generator/write-bundle.ts';
import { createIndex, deleteAllGenerations, deleteGeneration, finishIndices } from '../loader/generations.ts';
import { type LoadSummary, loadBundle } from '../loader/load-bundle.ts';
import type { Config } from '../src/config.ts';
import { spawnLoader } from '../harness/loader-process.ts';
import { NODE_ARGS } from '../harness/listener.ts';
import { INDICES } from '../src/indices/all.ts';
import { indexName, parseIndexName } from '../src/indices/generation.ts';
import { startFloor } from './load-floor.ts';
import { type Log, round } from './support.ts';

const CAPTURE_PREFIX = 'bench-raw';
const LOADER_PREFIX = 'bench-load';
/** Bulk requests in flight while replaying, and their size: the limit is measured with ~5 MB bodies, two in flight. */
const RAW_CONCURRENCY = 2;
const RAW_BODY_BYTES = 5_000_000;

export interface FileFigures {
  file: string;
  rows: number;
  loaderSeconds: number;
  loaderRowsPerSecond: number;
  rawSeconds: number;
  rawDocsPerSecond: number;
  /** Loader rows/s over raw docs/s. */
  ratio: number;
  /** Raw seconds over raw seconds beside the floor's work on the file: the most a loader can reach. */
  floorBound: number;
  /** Peak RSS of the loader process once this file was in. */
  loaderPeakRssMb: number;
}

export interface LoadBenchResult {
  bundle: { scale: number; rows: number; uncompressedMb: number };
  files: FileFigures[];
  total: { rows: number; loaderSeconds: number; loaderRowsPerSecond: number; rawSeconds: number; rawDocsPerSecond: number; ratio: number; floorSeconds: number; floorBound: number };
  loaderPeakRssMb: number;
  bulkRequests: number;
  bulkMbPerRequest: number;
}

export interface Captured {
  /** Description name of the index (`events`). */
  index: string;
  file: string;
  docs: number;
  bytes: number;
}

/** Step 1: load once and keep every `_bulk` body the loader sends, in order. */
export async function capture(client: Client, dir: string, out: string, config: Readonly<Config>, log: Log): Promise<{ generation: string; bodies: Captured[] }> {
  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  const bodies: Captured[] = [];
  const pending: Promise<void>[] = [];
  const record = (error: unknown, meta: { meta: { request: { params: { path: string; body?: unknown } } } } | null) => {
    const params = meta?.meta.request.params;
    if (error || !params || !params.path.endsWith('/_bulk') || params.body == null) return;
    const body = Buffer.isBuffer(params.body) ? params.body : Buffer.from(String(params.body));
    // The loader names the index in the path (`/<index>/_bulk`), not in each action.
    const index = parseIndexName(CAPTURE_PREFIX, decodeURIComponent(params.path.split('/')[1] ?? ''))?.index;
    if (index === undefined) return;
    let docs = 0;
    for (let at = body.indexOf(10); at !== -1; at = body.indexOf(10, at + 1)) docs += 1;
    const file = path.join(out, `${String(bodies.length).padStart(6, '0')}.ndjson`);
    bodies.push({ index, file, docs: docs / 2, bytes: body.length });
    pending.push(writeFile(file, body));
  };
  // The client is shared with the benches that follow: their loads are not this capture's.
  client.diagnostic.on('request', record as never);
  const summary = await loadBundle(dir, { client, prefix: CAPTURE_PREFIX, dataDir: path.join(config.cacheDir, 'bench-data'), cycleStarts: config.cycleStarts, force: true }).finally(() =>
    client.diagnostic.off('request', record as never),
  );
  await Promise.all(pending);
  log(`captured ${bodies.length} bulk bodies (${bodies.reduce((n, b) => n + b.docs, 0)} documents)`);
  return { generation: summary.generation, bodies };
}

/**
 * The loader as users run it, `npm run load` (its Node flags included), in a process of its own
 * (step 2; the scale benchmark loads with it too).
 */
export function runLoader(dir: string, esUrl: string, config: Readonly<Config>, prefix: string, force: boolean, env: Record<string, string> = {}): Promise<LoadSummary & { peakRssMb: number }> {
  return new Promise((resolve, reject) => {
    const settings = { ES_URL: esUrl, INDEX_PREFIX: prefix, DATA_DIR: path.join(config.cacheDir, 'bench-data'), ...env };
    const child = spawnLoader([dir, '--json', ...(force ? ['--force'] : [])], settings, { nodeArgs: NODE_ARGS, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (chunk) => (out += chunk));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`loader exited with ${code}`))));
  });
}

/**
 * One bulk body sent the cheapest way Node has. `fetch` streamed each 5 MB body through web
 * streams: 8 CPU seconds of the sender on the events file alone, taken from Elasticsearch on the
 * same cores (the raw replay then read 47.8 s against 45.0 s with this).
 */
function post(url: string, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const sent = request(url, { method: 'POST', headers: { 'content-type': 'application/x-ndjson', 'content-length': body.length } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      response.on('error', reject);
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

/**
 * Step 3: the captured bodies again, pre-built, `RAW_CONCURRENCY` in flight, index by index in
 * `order`: the loader's own (largest file first), so each index follows the same one as in the
 * loader's run and absorbs the same merges of it (whatever follows the events file pays for
 * part of its merging). Step 4 with `beside`: started with each index's clock, and awaited
 * within it.
 */
export async function replay(
  client: Client,
  esUrl: string,
  generation: string,
  bodies: Captured[],
  order: readonly string[],
  beside?: (index: string) => Promise<unknown>,
): Promise<{ seconds: Map<string, number>; finishSeconds: number }> {
  await deleteGeneration(client, CAPTURE_PREFIX, generation);
  for (const { name, mapping } of INDICES) await createIndex(client, indexName(CAPTURE_PREFIX, name, generation), mapping);
  const seconds = new Map<string, number>();
  for (const name of order) {
    // The loader's own bodies, joined into ~5 MB requests and read before the clock starts.
    const queue: Buffer[] = [];
    const group: Buffer[] = [];
    for (const body of bodies.filter((b) => b.index === name)) {
      group.push(await readFile(body.file));
      if (group.reduce((n, b) => n + b.length, 0) >= RAW_BODY_BYTES) queue.push(Buffer.concat(group.splice(0)));
    }
    if (group.length) queue.push(Buffer.concat(group));
    if (queue.length === 0) continue;
    const started = performance.now();
    const alongside = beside?.(name);
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const response = await post(`${esUrl}/${indexName(CAPTURE_PREFIX, name, generation)}/_bulk?filter_path=errors`, next);
        if (response.status >= 300 || (JSON.parse(response.text) as { errors?: boolean }).errors) throw new Error(`raw _bulk into ${name} failed (${response.status})`);
      }
    };
    await Promise.all([...Array.from({ length: RAW_CONCURRENCY }, worker), alongside]);
    seconds.set(name, (performance.now() - started) / 1000);
  }
  const started = performance.now();
  await finishIndices(client, INDICES.map(({ name }) => indexName(CAPTURE_PREFIX, name, generation)), 0, () => {});
  return { seconds, finishSeconds: (performance.now() - started) / 1000 };
}

export async function benchLoad(options: { client: Client; esUrl: string; config: Readonly<Config>; scale: number; log: Log }): Promise<LoadBenchResult> {
  const { client, esUrl, config, scale, log } = options;
  const dir = await ensureBundle(path.join(config.cacheDir, `bench-bundle-scale-${scale}`), { scale }, log);
  const work = path.join(config.cacheDir, 'bench-bulk');
  try {
    const { generation, bodies } = await capture(client, dir, work, config, log);
    log('loader (own process) ...');
    const loaded = await runLoader(dir, esUrl, config, LOADER_PREFIX, true);
    await deleteAllGenerations(client, LOADER_PREFIX);
    log(`loader: ${loaded.rows} rows in ${loaded.seconds.toFixed(1)} s, peak RSS ${loaded.peakRssMb} MB; raw _bulk ...`);
    // The index each loaded file fed, and back; the indices in the order the loader started them.
    const indexOf = new Map(loaded.files.map((f) => [f.file, INDICES.find((d) => d.files.some((stem) => f.file === `${stem}.jsonl`))!.name]));
    const fileOf = new Map([...indexOf].map(([file, name]) => [name, file]));
    const started = loaded.files.toSorted((a, b) => (a.startedAt ?? 0) - (b.startedAt ?? 0)).map((f) => indexOf.get(f.file)!);
    const order = [...new Set([...started, ...INDICES.map((d) => d.name)])];
    const raw = await replay(client, esUrl, generation, bodies, order);
    log('raw _bulk beside the floor (read, check, parse and hash every line) ...');
    const worker = await startFloor(dir);
    const floor = await replay(client, esUrl, generation, bodies, order, (name) => {
      const file = fileOf.get(name);
      return file ? worker.run(file) : Promise.resolve();
    }).finally(() => worker.close());
    const files: FileFigures[] = loaded.files.map((f) => {
      const name = indexOf.get(f.file)!;
      const rawSeconds = raw.seconds.get(name) ?? 0;
      const floorSeconds = floor.seconds.get(name) ?? 0;
      const docs = bodies.filter((b) => b.index === name).reduce((n, b) => n + b.docs, 0);
      const loaderRate = f.rows / f.seconds;
      const rawRate = docs / rawSeconds;
      return {
        file: f.file,
        rows: f.rows,
        loaderSeconds: round(f.seconds),
        loaderRowsPerSecond: Math.round(loaderRate),
        rawSeconds: round(rawSeconds),
        rawDocsPerSecond: Math.round(rawRate),
        ratio: round(loaderRate / rawRate),
        floorBound: round(rawSeconds / floorSeconds),
        loaderPeakRssMb: f.peakRssMb,
      };
    });
    const rawSeconds = [...raw.seconds.values()].reduce((a, b) => a + b, 0) + raw.finishSeconds;
    const floorSeconds = [...floor.seconds.values()].reduce((a, b) => a + b, 0) + floor.finishSeconds;
    const docs = bodies.reduce((n, b) => n + b.docs, 0);
    const bytes = bodies.reduce((n, b) => n + b.bytes, 0);
    const manifest = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')) as { files: { sizeBytes: number }[] };
    return {
      bundle: { scale, rows: loaded.rows, uncompressedMb: Math.round(manifest.files.reduce((n, f) => n + f.sizeBytes, 0) / 2 ** 20) },
      files,
      total: {
        rows: loaded.rows,
        loaderSeconds: round(loaded.seconds),
        loaderRowsPerSecond: Math.round(loaded.rows / loaded.seconds),
        rawSeconds: round(rawSeconds),
        rawDocsPerSecond: Math.round(docs / rawSeconds),
        ratio: round(loaded.rows / loaded.seconds / (docs / rawSeconds)),
        floorSeconds: round(floorSeconds),
        floorBound: round(rawSeconds / floorSeconds),
      },
      loaderPeakRssMb: loaded.peakRssMb,
      bulkRequests: bodies.length,
      bulkMbPerRequest: round(bytes / bodies.length / 2 ** 20),
    };
  } finally {
    await deleteAllGenerations(client, CAPTURE_PREFIX);
    await rm(work, { recursive: true, force: true });
  }
}
