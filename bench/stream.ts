/**
 * Live feed benchmark (`npm run bench -- stream [--scale N] [--streams N] [--seconds S]`): the
 * registry publishes to an object store (moto on loopback), a follower checks it every second,
 * and a gateway holds `--streams` open killmail streams (`/v1/killmails/stream`, default scope).
 *
 * 1. Idle: the gateway's RSS, and the p99 of `/v1/entities?limit=20` (10 connections).
 * 2. The streams opened: RSS again, and that p99 again beside them (goals: RSS within 100 MB of
 *    idle, p99 within 1.5× of its figure without streams).
 * 3. The next export published (new killmails on top, one late arrival): seconds from the
 *    pointer's write to the first new killmail on a stream (goal ≤ 15 s on the 1.5 M-row
 *    bundle), and to every stream holding every new row; rows missing or twice, over all
 *    streams (goal: none). The rows expected are what `/v1/killmails?sort=indexedAt:asc&since_indexed=`
 *    answers after the load: the same rule the streams keep.
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@elastic/elasticsearch';
import { writeNextExport } from '../generator/next-export.ts';
import { publishBundle } from '../generator/publish.ts';
import { ensureBundle } from '../generator/write-bundle.ts';
import { deleteAllGenerations } from '../loader/generations.ts';
import { spawnFollower } from '../harness/loader-process.ts';
import { spawnGateway } from '../harness/gateway-process.ts';
import { NODE_ARGS } from '../harness/listener.ts';
import { startMoto } from '../harness/moto.ts';
import { rssMb } from '../harness/proc.ts';
import { openSse, type SseStream } from '../harness/sse.ts';
import type { Config } from '../src/config.ts';
import { withNewRows } from '../generator/new-rows.ts';
import { runLoader } from './load.ts';
import { type Log, drive, round } from './support.ts';

const PREFIX = 'bench-stream';
const SOURCE = 's3://registry/stream';

export interface StreamBenchResult {
  scale: number;
  streams: number;
  rssMb: { idle: number; streams: number; delta: number };
  /** p99 ms of `/v1/entities?limit=20` without streams and beside them, and their ratio (goal ≤ 1.5). */
  otherP99Ms: { alone: number; beside: number; ratio: number };
  /** Seconds from the pointer's write to the first new row on a stream (goal ≤ 15), and to every stream complete. */
  publishToFirstRowSeconds: number;
  publishToAllSeconds: number;
  newRows: number;
  /** Over all streams: rows expected and not received, and rows received twice (goal: 0 and 0). */
  missing: number;
  twice: number;
}

export async function benchStream(options: { client: Client; esUrl: string; config: Readonly<Config>; scale: number; streams: number; seconds: number; log: Log }): Promise<StreamBenchResult> {
  const { client, esUrl, config, scale, streams: count, seconds, log } = options;
  const dir = await ensureBundle(path.join(config.cacheDir, `bench-bundle-scale-${scale}`), { scale }, log);
  const next = path.join(config.cacheDir, `bench-bundle-scale-${scale}-stream-next`);
  await writeNextExport(dir, next, { killmails: withNewRows('stream') });
  await deleteAllGenerations(client, PREFIX);
  const moto = await startMoto();
  try {
    await moto.createBucket('registry');
    await publishBundle(dir, SOURCE, { store: moto.store() });
    log(`stream: loading scale ${scale} from the store ...`);
    await runLoader(SOURCE, esUrl, config, PREFIX, true, moto.env);
    const gateway = await spawnGateway({ ES_URL: esUrl, INDEX_PREFIX: PREFIX, STREAMS_PER_CLIENT: String(count), STREAMS_MAX: String(count), RESPONSE_CACHE: 'off' });
    // Rows first held by the next load are those indexed after this generation's last instant.
    const through = ((await (await fetch(`${gateway.url}/v1/ready`)).json()) as { data: { indexedThrough: string } }).data.indexedThrough;
    const opened: SseStream[] = [];
    const lines: string[] = [];
    const env = { ...moto.env, ES_URL: esUrl, INDEX_PREFIX: PREFIX, DATA_DIR: path.join(config.cacheDir, 'bench-data') };
    const follower = spawnFollower(SOURCE, env, { nodeArgs: NODE_ARGS, onLine: (line) => lines.push(line) });
    try {
      const other = () => drive({ url: gateway.url, requests: [{ path: '/v1/entities?limit=20' }] }, seconds);
      await other();
      const alone = await other();
      const idle = await rssMb(gateway.pid);
      log(`stream: idle RSS ${round(idle)} MB, /v1/entities p99 ${alone.p99Ms} ms; opening ${count} streams ...`);
      for (let i = 0; i < count; i += 50) {
        opened.push(...(await Promise.all(Array.from({ length: Math.min(50, count - i) }, () => openSse(`${gateway.url}/v1/killmails/stream`)))));
      }
      await Promise.all(opened.map((s) => s.until((x) => x.comments.includes('live'), 'live comment', 60_000)));
      const beside = await other();
      const withStreams = await rssMb(gateway.pid);
      log(`stream: ${count} streams open: RSS ${round(withStreams)} MB, /v1/entities p99 ${beside.p99Ms} ms; publishing the next export ...`);

      while (!lines.some((l) => / live$/.test(l))) await sleep(200);
      const arrivals = new Map<SseStream, number>();
      const before = opened.map((s) => s.events.length);
      await publishBundle(next, SOURCE, { store: moto.store() });
      const written = performance.now();
      let first: number | undefined;
      const expected = async () =>
        ((await (await fetch(`${gateway.url}/v1/killmails?sort=indexedAt:asc&limit=200&since_indexed=${encodeURIComponent(through)}`)).json()) as { data: { id: string }[] }).data.map((r) => r.id);
      let want: string[] = [];
      for (let waited = 0; waited < 120_000; waited += 50) {
        opened.forEach((s, i) => {
          if (!arrivals.has(s) && s.events.slice(before[i]).some((e) => e.data !== undefined && e.event === undefined)) arrivals.set(s, performance.now());
        });
        if (first === undefined && arrivals.size > 0) first = Math.min(...arrivals.values());
        if (want.length === 0 && first !== undefined) want = await expected();
        if (want.length > 0 && opened.every((s) => s.rows().length >= want.length)) break;
        if (lines.some((l) => /: failed: /.test(l))) throw new Error(`the follower failed: ${lines.at(-1)}`);
        await sleep(50);
      }
      const all = performance.now();
      let missing = 0;
      let twice = 0;
      for (const s of opened) {
        const ids = s.rows().map((r: { id: string }) => r.id);
        missing += want.filter((id) => !ids.includes(id)).length;
        twice += ids.length - new Set(ids).size;
      }
      const result: StreamBenchResult = {
        scale,
        streams: count,
        rssMb: { idle: round(idle), streams: round(withStreams), delta: round(withStreams - idle) },
        otherP99Ms: { alone: alone.p99Ms, beside: beside.p99Ms, ratio: round(beside.p99Ms / Math.max(1, alone.p99Ms)) },
        publishToFirstRowSeconds: first === undefined ? NaN : round((first - written) / 1000),
        publishToAllSeconds: round((all - written) / 1000),
        newRows: want.length,
        missing,
        twice,
      };
      log(`stream: ${JSON.stringify(result)}`);
      return result;
    } finally {
      for (const s of opened) s.close();
      follower.kill('SIGTERM');
      await gateway.stop();
    }
  } finally {
    await moto.stop();
  }
}
