/**
 * Client power benchmark (`npm run bench -- client`), on the 1.5 M-row bundle, the response
 * cache off so that every request reaches Elasticsearch:
 *
 * 1. Downloads: every stillness event (`/v1/events?cycles=all&format=ndjson|csv`) in rows per
 *    second, against the limit measured in the same run — the same query and sort walked by
 *    `search_after` under a point in time, a thousand rows a page, sent to Elasticsearch directly
 *    (each page's JSON parsed for its last sort values, as any client must). Interleaved rounds.
 * 2. Memory: the gateway's resident set sampled every 100 ms during a download of a million rows
 *    (the 1 M-event bundle of the scale benchmark, `DOWNLOAD_MAX_ROWS` raised to hold it), over
 *    its resident set when idle before.
 * 3. Many records in one call: `id=` with 100 event ids against the same 100 records fetched one
 *    by one (sequentially, and 10 at a time), over 20 different sets of ids.
 * 4. Several facets in one call: `group_by=entityType,environment,cycle` on `/v1/search` against
 *    the three single-field requests (sequentially, and at once), over rotating `q` words.
 */
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { readAllRows } from '../generator/read-bundle.ts';
import { ensureBundle } from '../generator/write-bundle.ts';
import { liveGeneration } from '../loader/generations.ts';
import { loadBundle } from '../loader/load-bundle.ts';
import { spawnGateway } from '../harness/gateway-process.ts';
import { rssMb } from '../harness/proc.ts';
import type { Config } from '../src/config.ts';
import { concreteIndex } from '../src/indices/generation.ts';
import { toQuery } from '../src/query/list.ts';
import { toEventListQuery } from '../src/query/timeline.ts';
import { rowRequest } from '../src/search/search-service.ts';
import { runLoader } from './load.ts';
import { type Log, mean, round } from './support.ts';

const PREFIX = 'bench-client';
const PAGE_ROWS = 1000;
const ROUNDS = 2;
const BATCH = 100;
const BATCH_SETS = 20;
const FACET_QUERIES = 20;

export interface ClientBenchResult {
  bundle: { scale: number; rows: number };
  download: {
    rows: number;
    /** Rows per second, averaged over the rounds. */
    direct: number;
    ndjson: number;
    csv: number;
    ndjsonOfDirect: number;
    csvOfDirect: number;
    memory: { rows: number; idleRssMb: number; peakRssMb: number; overIdleMb: number };
  };
  batch: { ids: number; sets: number; batchMs: number; singlesSequentialMs: number; singlesTenAtOnceMs: number; sequentialOverBatch: number; tenAtOnceOverBatch: number };
  facets: { queries: number; oneRequestMs: number; threeSequentialMs: number; threeAtOnceMs: number; sequentialOverOne: number; atOnceOverOne: number };
}

/** Reads a response to its end, counting its lines, without keeping it. */
async function countLines(response: Response): Promise<number> {
  let lines = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines += 1;
  }
  return lines;
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

/** The direct limit: the gateway's query and sort walked with a point in time, pages of 1000, as a client would. */
async function directScan(esUrl: string, index: string, body: { query: unknown; sort: unknown }): Promise<number> {
  const post = async (url: string, payload: unknown) => {
    const response = await fetch(`${esUrl}${url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });
    if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<any>;
  };
  const { id } = await post(`/${index}/_pit?keep_alive=1m`, undefined);
  let rows = 0;
  let after: unknown[] | undefined;
  try {
    for (;;) {
      const page = await post('/_search?filter_path=hits.hits._source.row,hits.hits.fields.row,hits.hits.sort', { ...body, pit: { id, keep_alive: '1m' }, size: PAGE_ROWS, track_total_hits: false, ...(after && { search_after: after }) });
      const hits = page.hits?.hits ?? [];
      rows += hits.length;
      if (hits.length < PAGE_ROWS) return rows;
      after = hits.at(-1).sort;
    }
  } finally {
    await fetch(`${esUrl}/_pit`, { method: 'DELETE', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id }) });
  }
}

export async function benchClient(options: { client: Client; esUrl: string; config: Readonly<Config>; scale: number; log: Log }): Promise<ClientBenchResult> {
  const { client, esUrl, config, scale, log } = options;
  const dir = await ensureBundle(path.join(config.cacheDir, `bench-bundle-scale-${scale}`), { scale }, log);
  log(`client: loading the scale-${scale} bundle (${PREFIX}) ...`);
  const loaded = await loadBundle(dir, { client, prefix: PREFIX, dataDir: path.join(config.cacheDir, 'bench-data'), cycleStarts: config.cycleStarts });
  const live = (await liveGeneration(client, PREFIX))!;
  const rows = Object.values(loaded.counts).reduce((a, b) => a + b, 0);
  const gateway = await spawnGateway({ ES_URL: esUrl, INDEX_PREFIX: PREFIX, RESPONSE_CACHE: 'off', DOWNLOAD_MAX_ROWS: '10000000', EXPORT_CONCURRENCY: 'off' });
  try {
    // 1. Download rate against the direct scan of the same rows.
    const scope = { environment: 'stillness', scope: { kind: 'all' } as const };
    const list = toEventListQuery(scope, live.currentCycle);
    const index = concreteIndex(PREFIX, live, 'events');
    const runs = { direct: [] as number[], ndjson: [] as number[], csv: [] as number[] };
    let downloaded = 0;
    for (let round_ = 0; round_ <= ROUNDS; round_ += 1) {
      const d = await timed(() => directScan(esUrl, index, rowRequest(live, 'events', { query: toQuery(list), sort: list.sort })));
      const n = await timed(async () => countLines(await fetch(`${gateway.url}/v1/events?cycles=all&format=ndjson`)));
      const c = await timed(async () => countLines(await fetch(`${gateway.url}/v1/events?cycles=all&format=csv`)));
      if (n.value !== d.value || c.value !== d.value + 1) throw new Error(`download rows differ: direct ${d.value}, ndjson ${n.value}, csv ${c.value - 1}`);
      downloaded = d.value;
      log(`download round ${round_}: ${d.value} rows, direct ${Math.round(d.value / (d.ms / 1000))}/s, ndjson ${Math.round(n.value / (n.ms / 1000))}/s, csv ${Math.round(d.value / (c.ms / 1000))}/s`);
      // Round 0 warms both sides (JIT, caches) and is not counted.
      if (round_ === 0) continue;
      runs.direct.push(d.value / (d.ms / 1000));
      runs.ndjson.push(n.value / (n.ms / 1000));
      runs.csv.push(d.value / (c.ms / 1000));
    }

    // 3. 100 ids in one call against 100 lookups.
    const events = (await readAllRows(dir, 'events.jsonl')).filter((r) => r.environment === 'stillness').map((r) => String(r.id));
    const sets = Array.from({ length: BATCH_SETS }, (_, i) => events.slice(i * BATCH * 7, i * BATCH * 7 + BATCH * 7).filter((_, j) => j % 7 === 0));
    const batch: number[] = [];
    const sequential: number[] = [];
    const tenAtOnce: number[] = [];
    const get = async (url: string) => {
      const response = await fetch(`${gateway.url}${url}`);
      if (response.status !== 200) throw new Error(`${url}: ${response.status}`);
      await response.arrayBuffer();
    };
    for (const ids of sets) {
      batch.push((await timed(() => get(`/v1/events?cycles=all&limit=${BATCH}&id=${encodeURIComponent(ids.join('|'))}`))).ms);
      sequential.push(
        (
          await timed(async () => {
            for (const id of ids) await get(`/v1/events/${encodeURIComponent(id)}`);
          })
        ).ms,
      );
      tenAtOnce.push(
        (
          await timed(async () => {
            for (let i = 0; i < ids.length; i += 10) await Promise.all(ids.slice(i, i + 10).map((id) => get(`/v1/events/${encodeURIComponent(id)}`)));
          })
        ).ms,
      );
    }

    // 4. Three facets in one request against three.
    const words = [...new Set((await readAllRows(dir, 'entities.jsonl')).flatMap((r) => String(r.name).split(' ')).filter((w) => /^[A-Za-z]{4,}$/.test(w)))].slice(0, FACET_QUERIES);
    const fields = ['entityType', 'environment', 'cycle'];
    const one: number[] = [];
    const threeSequential: number[] = [];
    const threeAtOnce: number[] = [];
    for (const word of words) {
      const base = `/v1/search?q=${encodeURIComponent(word)}&cycles=all`;
      one.push((await timed(() => get(`${base}&group_by=${fields.join(',')}`))).ms);
      threeSequential.push(
        (
          await timed(async () => {
            for (const field of fields) await get(`${base}&group_by=${field}`);
          })
        ).ms,
      );
      threeAtOnce.push((await timed(() => Promise.all(fields.map((field) => get(`${base}&group_by=${field}`))))).ms);
    }
    const batchMs = mean(batch);
    const oneMs = mean(one);
    const result: Omit<ClientBenchResult, 'download'> & { download: Omit<ClientBenchResult['download'], 'memory'> } = {
      bundle: { scale, rows },
      download: {
        rows: downloaded,
        direct: Math.round(mean(runs.direct)),
        ndjson: Math.round(mean(runs.ndjson)),
        csv: Math.round(mean(runs.csv)),
        ndjsonOfDirect: round(mean(runs.ndjson) / mean(runs.direct)),
        csvOfDirect: round(mean(runs.csv) / mean(runs.direct)),
      },
      batch: {
        ids: BATCH,
        sets: sets.length,
        batchMs: round(batchMs, 1),
        singlesSequentialMs: round(mean(sequential), 1),
        singlesTenAtOnceMs: round(mean(tenAtOnce), 1),
        sequentialOverBatch: round(mean(sequential) / batchMs, 1),
        tenAtOnceOverBatch: round(mean(tenAtOnce) / batchMs, 1),
      },
      facets: {
        queries: words.length,
        oneRequestMs: round(oneMs, 1),
        threeSequentialMs: round(mean(threeSequential), 1),
        threeAtOnceMs: round(mean(threeAtOnce), 1),
        sequentialOverOne: round(mean(threeSequential) / oneMs),
        atOnceOverOne: round(mean(threeAtOnce) / oneMs),
      },
    };
    log(`batch: ${JSON.stringify(result.batch)}`);
    log(`facets: ${JSON.stringify(result.facets)}`);
    await gateway.stop();
    return { ...result, download: { ...result.download, memory: await downloadMemory(esUrl, config, log) } };
  } finally {
    await gateway.stop();
  }
}

/** 2. The gateway's resident set during a download of a million rows, over idle. */
async function downloadMemory(esUrl: string, config: Readonly<Config>, log: Log): Promise<ClientBenchResult['download']['memory']> {
  // Events alone, some 1.06 M of them, 95 % in the environment downloaded.
  const prefix = 'bench-download';
  const dir = await ensureBundle(path.join(config.cacheDir, 'bench-download-1m'), { scale: 20, eventsPerEntity: 530, includeChainObjects: false }, log);
  await runLoader(dir, esUrl, config, prefix, false);
  const gateway = await spawnGateway({ ES_URL: esUrl, INDEX_PREFIX: prefix, RESPONSE_CACHE: 'off', DOWNLOAD_MAX_ROWS: '10000000' });
  try {
    // Idle after one small request (modules loaded, connections open).
    await (await fetch(`${gateway.url}/v1/events?limit=1`)).arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const idle = await rssMb(gateway.pid);
    let peak = idle;
    const sampler = setInterval(() => void rssMb(gateway.pid).then((mb) => (peak = Math.max(peak, mb)), () => {}), 100);
    const rows = await countLines(await fetch(`${gateway.url}/v1/events?cycles=all&environment=stillness&format=ndjson`)).finally(() => clearInterval(sampler));
    log(`memory: ${rows} rows; idle ${round(idle, 1)} MB, peak ${round(peak, 1)} MB`);
    return { rows, idleRssMb: round(idle, 1), peakRssMb: round(peak, 1), overIdleMb: round(peak - idle, 1) };
  } finally {
    await gateway.stop();
  }
}
