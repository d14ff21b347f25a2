/**
 * Soak: mixed load through one gateway process for `--minutes` (default 10), in one-minute
 * slices. After each slice the gateway's RSS and open file descriptors are read from /proc, so
 * a leak shows as a slope; every request is expected to succeed (any non-2xx, connection error
 * or timeout is counted as an error) but the download limit's 429s, counted apart.
 *
 * The mix rotates over list routes (with `q`, filters and scopes), searches, details, the
 * provenance subroutes, ops documents, metrics, export downloads (plain, gzip and ranged), batches
 * of ids, killmails by involvement, several facets at once and lists as files, all built from the
 * bundle's own rows.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { readAllRows } from '../generator/read-bundle.ts';
import { ensureBundle } from '../generator/write-bundle.ts';
import { loadBundle } from '../loader/load-bundle.ts';
import { spawnGateway } from '../harness/gateway-process.ts';
import { rssMb } from '../harness/proc.ts';
import type { Config } from '../src/config.ts';
import { type Log, drive, round } from './support.ts';

const PREFIX = 'bench-soak';

export interface SoakSlice {
  minute: number;
  requests: number;
  requestsPerSecond: number;
  p99Ms: number;
  /** Answers that are neither 2xx nor a download limit's 429, connection errors and timeouts. */
  errors: number;
  /** 429s of the per-client download limit (`EXPORT_CONCURRENCY`). */
  downloadsRefused: number;
  /** Non-2xx answers by status. */
  statuses: Record<string, number>;
  rssMb: number;
  openFds: number;
}

export interface SoakResult {
  minutes: number;
  paths: number;
  requests: number;
  errors: number;
  downloadsRefused: number;
  start: { rssMb: number; openFds: number };
  slices: SoakSlice[];
  /** RSS growth over the second half of the run, MB per minute (about 0 when it levels off). */
  rssSlopeSecondHalfMbPerMinute: number;
}

async function processState(pid: number): Promise<{ rssMb: number; openFds: number }> {
  return { rssMb: Math.round(await rssMb(pid)), openFds: (await readdir(`/proc/${pid}/fd`)).length };
}

async function mix(dir: string): Promise<string[]> {
  const enc = encodeURIComponent;
  const entities = (await readAllRows(dir, 'entities.jsonl')).filter((r) => r.environment === 'stillness').slice(0, 60);
  const killmails = (await readAllRows(dir, 'killmails.jsonl')).slice(0, 20);
  const events = (await readAllRows(dir, 'events.jsonl')).slice(0, 20);
  const sources = (await readAllRows(dir, 'sources.jsonl')).slice(0, 5);
  const words = entities.map((e) => String(e.name).split(' ')[0]!).filter((w) => w.length > 3);
  return [
    '/v1/entities?limit=50', '/v1/entities?cycles=all&limit=200', '/v1/search', '/v1/types', '/v1/characters?profile=known',
    ...words.slice(0, 20).map((w) => `/v1/search?q=${enc(w)}&limit=20`),
    ...words.slice(20, 30).map((w) => `/v1/search?q=${enc(w.slice(0, 3))}x${enc(w.slice(4))}`),
    ...entities.slice(0, 20).flatMap((e) => [`/v1/entities/${enc(e.id)}`, `/v1/entities/${enc(e.id)}/facts?limit=20`, `/v1/entities/${enc(e.id)}/history`]),
    ...['characters', 'tribes', 'systems', 'assemblies', 'ownership', 'route-edges'].map((c) => `/v1/current/${c}?limit=50`),
    '/v1/events?limit=100', '/v1/events?cycles=all&limit=50', ...events.slice(0, 5).map((e) => `/v1/events/${enc(e.id)}`),
    `/v1/events?kind=${enc(String(events[0]?.kind))}`, '/v1/killmails?limit=50', '/v1/killmails?npc=true',
    ...killmails.slice(0, 10).flatMap((k) => [`/v1/killmails/${enc(k.id)}`, `/v1/killmails/${enc(k.id)}/raw`]),
    '/v1/sources', ...sources.map((s) => `/v1/sources/${enc(s.id)}`),
    '/v1/ops/freshness', '/v1/ops/source-gaps', '/v1/ops/chain-coverage', '/v1/ready', '/v1/health', '/v1', '/v1/metrics',
    '/v1/exports/manifest.json', '/v1/exports/sources.jsonl', '/v1/exports/killmails.jsonl', '/v1/exports/entities.jsonl',
    // Client power: batches of ids, killmails by involvement, several facets at once, lists as files.
    `/v1/entities?id=${entities.slice(0, 25).map((e) => enc(e.id)).join('|')}`,
    ...killmails.slice(0, 5).map((k) => `/v1/killmails?cycles=all&involved=${enc(String(k.victimCharacterId))}|${enc(String(k.reporterCharacterId))}`),
    '/v1/entities?group_by=entityType,cycle,environment', '/v1/killmails?cycles=all&group_by=system,npc',
    `/v1/events?format=ndjson&kind=${enc(String(events[0]?.kind))}`, '/v1/killmails?cycles=all&format=csv',
  ];
}

export async function benchSoak(options: { client: Client; esUrl: string; config: Readonly<Config>; minutes: number; log: Log }): Promise<SoakResult> {
  const { client, esUrl, config, minutes, log } = options;
  const dir = await ensureBundle(path.join(config.cacheDir, 'bench-bundle-scale-20'), { scale: 20 }, log);
  await loadBundle(dir, { client, prefix: PREFIX, dataDir: path.join(config.cacheDir, 'bench-data'), cycleStarts: config.cycleStarts });
  const paths = await mix(dir);
  // The request log stays on (`info`, its default; the bench reads and drops it): the soak includes its cost.
  // Limits at their defaults but the rate limit and admission control (spawnGateway): its one client
  // drives thousands of requests a second. Its 10 connections meet the per-client limit of 4 export
  // downloads now and then (the response cache answers everything else fast, so they pile up on
  // exports): those 429s are the limit at work and are counted apart, not as errors.
  const gateway = await spawnGateway({ ES_URL: esUrl, INDEX_PREFIX: PREFIX, LOG_LEVEL: 'info' });
  try {
    const start = await processState(gateway.pid);
    log(`soak: ${paths.length} paths, ${minutes} min; gateway RSS ${start.rssMb} MB, ${start.openFds} fds`);
    const slices: SoakSlice[] = [];
    for (let minute = 1; minute <= minutes; minute += 1) {
      const figures = await drive({ url: gateway.url, requests: paths.map((p) => ({ path: p })) }, 60);
      const state = await processState(gateway.pid);
      const downloadsRefused = figures.statuses['429'] ?? 0;
      const errors = figures.non2xx - downloadsRefused + figures.errors;
      slices.push({ minute, requests: figures.requests, requestsPerSecond: figures.requestsPerSecond, p99Ms: figures.p99Ms, errors, downloadsRefused, statuses: figures.statuses, ...state });
      log(`soak minute ${minute}: ${figures.requestsPerSecond} req/s, ${errors} errors, ${downloadsRefused} downloads refused ${JSON.stringify(figures.statuses)}, RSS ${state.rssMb} MB, ${state.openFds} fds`);
    }
    const half = slices.slice(Math.floor(slices.length / 2));
    const slope = half.length > 1 ? (half.at(-1)!.rssMb - half[0]!.rssMb) / (half.at(-1)!.minute - half[0]!.minute) : 0;
    return {
      minutes,
      paths: paths.length,
      requests: slices.reduce((n, s) => n + s.requests, 0),
      errors: slices.reduce((n, s) => n + s.errors, 0),
      downloadsRefused: slices.reduce((n, s) => n + s.downloadsRefused, 0),
      start,
      slices,
      rssSlopeSecondHalfMbPerMinute: round(slope),
    };
  } finally {
    await gateway.stop();
  }
}
