/**
 * The loader's command line (`npm run load -- …`), product code: it needs `ES_URL` and refuses
 * to start without it (a development node is `npm start`'s business, in scripts/).
 *
 *   <source> [--force] [--json]      load the bundle a source names, once (exit 0 when loaded or
 *                                    already live, 1 when refused, 2 on a usage error); a source is a
 *                                    directory, s3://bucket/prefix or an http(s):// folder: a bundle,
 *                                    a latest/ folder, or the prefix above latest/ (AWS_* sign s3://)
 *   --follow [<source>] [--every 60s]  follow a source: load each new bundle it publishes (LOAD_SOURCE, FOLLOW_EVERY)
 *   --rollback [<generation>]        make a kept generation live again (the previous one by default)
 *   --list                           the kept generations, live first
 *
 * SIGTERM or SIGINT stops a load: what it built is deleted, the live generation is untouched.
 * `npm run load` starts it with 8 MB V8 semi-spaces (package.json): the young generation V8
 * picks on a large machine lets a load's short-lived garbage add ~100 MB of RSS for nothing.
 */
import path from 'node:path';
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parseArgs } from 'node:util';
import type { Client } from '@elastic/elasticsearch';
import { ConfigError, LOADER_SECTIONS, type LoaderConfig, MIN_FOLLOW_EVERY_MS, loadConfig, parseDuration } from '../src/config.ts';
import { createClient } from '../src/search/client.ts';
import { isStoreUrl } from '../src/store/location.ts';
import { createObjectStore } from '../src/store/object-store.ts';
import { LoadError } from './errors.ts';
import { generationDocs, liveGeneration } from './generations.ts';
import { type LoadOptions, loadBundle } from './load-bundle.ts';
import { createProgress } from './progress.ts';
import { rollback } from './rollback.ts';
import { formatSummary } from './summary.ts';

const USAGE = [
  'usage: npm run load -- <source> [--force] [--json]',
  '       npm run load -- --follow [<source>] [--every 60s]',
  '       npm run load -- --rollback [<generation>]',
  '       npm run load -- --list',
  '<source>: a bundle directory, an http(s):// URL or s3://bucket/prefix (a bundle, or where the registry publishes: <prefix>/latest/manifest.json)',
].join('\n');

class UsageError extends Error {}

/** A local source is relative to the caller's directory (npm runs scripts in the project root). */
function resolveSource(source: string): string {
  return isStoreUrl(source) ? source : path.resolve(process.env.INIT_CWD ?? process.cwd(), source);
}

function loadOptions(config: Readonly<LoaderConfig>, client: ReturnType<typeof createClient>, write: (line: string) => void, signal: AbortSignal): LoadOptions {
  return {
    client,
    prefix: config.indexPrefix,
    dataDir: config.dataDir,
    cycleStarts: config.cycleStarts,
    currentCycle: config.currentCycle,
    replicas: config.esReplicas,
    keep: config.keepGenerations,
    keepHours: config.keepHours,
    tombstoneDays: config.tombstoneDays,
    shardTargetBytes: config.shardTargetBytes,
    minShards: config.minShards,
    concurrency: config.loadConcurrency,
    workers: config.loadWorkers,
    signal,
    store: createObjectStore(config.store, {
      onRetry: ({ method, url, reason, attempt, delayMs, offset }) =>
        write(`retrying ${method} ${url} in ${delayMs} ms (${reason}; failure ${attempt} of ${config.store.attempts}${offset ? `, resuming at byte ${offset}` : ''})`),
    }),
    progress: createProgress({ tty: Boolean(process.stderr.isTTY), write }),
  };
}

/**
 * On shared cores the loader yields to reads. On Linux a nice value is a thread's own: the
 * threads Node started before this call (V8's garbage collection and compiler helpers, six on
 * Node 24) are lowered one by one, and those started after (libuv's pool, parse workers)
 * inherit it from the thread that starts them.
 */
function yieldToReaders(nice: number, write: (line: string) => void): void {
  if (nice <= 0) return;
  try {
    lowerPriority(nice);
  } catch (error) {
    write(`warning: could not lower the loader's priority (LOAD_NICE=${nice}): ${(error as Error).message}`);
  }
}

/** `--list`: the kept generations, the live one marked. */
async function listGenerations(client: Client, prefix: string): Promise<void> {
  const live = await liveGeneration(client, prefix);
  for (const doc of await generationDocs(client, prefix)) {
    const mark = doc.generation === live?.generation ? 'live' : 'kept';
    console.log(`${mark}  ${doc.generation}  bundle ${doc.bundleId.slice(0, 16)}  generated ${doc.generatedAt ?? '?'}  loaded ${doc.loadedAt}`);
  }
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      force: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      follow: { type: 'boolean', default: false },
      every: { type: 'string' },
      rollback: { type: 'boolean', default: false },
      list: { type: 'boolean', default: false },
    },
  });
  const modes = [values.follow, values.rollback, values.list].filter(Boolean).length;
  if (modes > 1 || positionals.length > 1) throw new UsageError('give one of --follow, --rollback and --list');
  // Only what the loader reads: a bad gateway setting (RATE_LIMIT …) never stops a load.
  const config = loadConfig(process.env, LOADER_SECTIONS);
  if (!config.esUrl) {
    console.error('ES_URL is not set: the loader needs the Elasticsearch to load into (e.g. ES_URL=http://127.0.0.1:9200). For a local development node, run `npm start`.');
    return 2;
  }
  const write = (line: string) => console.error(line);
  yieldToReaders(config.loadNice, write);
  const client = createClient(config.esUrl, 120_000);
  const stop = new AbortController();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stop.signal.aborted) process.exit(1);
      write(`${signal}: stopping; what this load built is deleted`);
      stop.abort();
    });
  }
  try {
    if (values.list) {
      await listGenerations(client, config.indexPrefix);
      return 0;
    }
    if (values.rollback) {
      const { from, to } = await rollback(client, config.indexPrefix, positionals[0], stop.signal);
      console.log(`rolled back: generation ${to.generation} (bundle ${to.bundleId.slice(0, 16)}) is live again in place of ${from.generation}; a follower will not load bundle ${from.bundleId.slice(0, 16)} again`);
      return 0;
    }
    if (values.follow) {
      const source = positionals[0] ?? config.loadSource;
      if (!source) throw new UsageError('--follow needs a source (or LOAD_SOURCE)');
      const everyMs = values.every === undefined ? config.followEveryMs : parseDuration('--every', values.every, MIN_FOLLOW_EVERY_MS);
      const { follow } = await import('./follow.ts');
      await follow({ ...loadOptions(config, client, write, stop.signal), source: resolveSource(source), everyMs, log: write });
      return 0;
    }
    const [source] = positionals;
    if (!source) throw new UsageError('give a source');
    const summary = await loadBundle(resolveSource(source), { ...loadOptions(config, client, write, stop.signal), force: values.force });
    const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
    console.log(values.json ? JSON.stringify({ ...summary, peakRssMb }) : formatSummary(summary));
    return 0;
  } catch (error) {
    if (stop.signal.aborted) {
      console.error('interrupted: what the load built was deleted\nthe live generation is unchanged');
      return 1;
    }
    if (error instanceof LoadError) {
      console.error(`${values.rollback ? 'rollback refused' : 'load refused'}: ${error.message}\nthe live generation is unchanged`);
      return 1;
    }
    throw error;
  } finally {
    await client.close();
  }
}

try {
  process.exitCode = await main();
} catch (error) {
  if (!(error instanceof UsageError || error instanceof ConfigError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))) throw error;
  console.error(`${(error as Error).message}\n${USAGE}`);
  process.exitCode = 2;
}

/** Every thread of this process at `nice` (where /proc lists them), else the calling one. */
function lowerPriority(nice: number): void {
  let threads: string[] = [];
  try {
    threads = readdirSync('/proc/self/task');
  } catch {
    // Not Linux: the process's priority is one.
  }
  setPriority(nice);
  for (const tid of threads) setPriority(Number(tid), nice);
}
