/**
 * The loader (`npm run load`): what a load keeps, how it builds its indices, how hard it works
 * the machine, and what it follows. The defaults are exported for loads started without these
 * settings (`npm start`'s served bundle, tests), so they are declared here only.
 */
import { duration, int, orOff, scaled, text } from './parse.ts';
import { type Setting, read, section } from './setting.ts';

/** The live generation and the one before it, for `--rollback`. */
export const DEFAULT_KEEP_GENERATIONS = 2;
/** Days the rows that left or changed are kept (`TOMBSTONE_DAYS`; src/indices/changes.ts). */
export const DEFAULT_TOMBSTONE_DAYS = 90;
/** A single node holds no replica. */
export const DEFAULT_ES_REPLICAS = 0;
/** A follower checks its source at most once a second (`--every` too). */
export const MIN_FOLLOW_EVERY_MS = 1000;

const readBy = ['loader'] as const;

const shardTargetBytes: Setting<number> = {
  env: 'ES_SHARD_TARGET_GB',
  // 25 GB of JSONL per shard, inside Elastic's 10–50 GB advice.
  default: 25,
  parse: scaled(int(1, 1000), 1024 ** 3),
  meaning: "primary shards per index: one per this many GB of its uncompressed JSONL (Elastic's guide: 10–50 GB a shard)",
  readBy,
};
/** Bytes of JSONL per primary shard when ES_SHARD_TARGET_GB is unset. */
export const DEFAULT_SHARD_TARGET_BYTES = read(shardTargetBytes, {});

const minShards: Setting<number> = {
  env: 'ES_MIN_SHARDS',
  default: 1,
  parse: int(1, 64),
  meaning: 'primary shards every index gets at least, whatever its size: a small cluster spread over its nodes, or tests of counts and groups over several shards',
  readBy,
};
/** Primary shards per index at least when ES_MIN_SHARDS is unset. */
export const DEFAULT_MIN_SHARDS = read(minShards, {});

export const loader = section({
  keepGenerations: {
    env: 'KEEP_GENERATIONS',
    default: DEFAULT_KEEP_GENERATIONS,
    parse: int(1, 100),
    meaning: 'generations a load keeps, the live one included: the one it replaced stays first in line for `--rollback`; each kept one answers reads pinned with `bundle=`',
    readBy,
  },
  keepHours: {
    env: 'KEEP_HOURS',
    default: 'off',
    parse: orOff(int(1, 24 * 365)),
    meaning: 'hours a generation stays kept after its load, beyond the newest `KEEP_GENERATIONS` (`bundle=` reads it meanwhile); `off`: by count alone. A kept generation costs the disk of the indices it built or updated (an index no row of changed is the previous one, shared); see *Loading bundles*',
    readBy,
  },
  tombstoneDays: {
    env: 'TOMBSTONE_DAYS',
    default: DEFAULT_TOMBSTONE_DAYS,
    parse: int(1, 36_500),
    meaning: 'days the rows that left or changed are kept for `include=removed` walks and `410`s, whatever `KEEP_GENERATIONS` says (see *Following new rows*)',
    readBy,
  },
  esReplicas: {
    env: 'ES_REPLICAS',
    default: DEFAULT_ES_REPLICAS,
    parse: int(0, 10),
    meaning: 'replicas of every index once loaded (set `1` on a cluster of two or more nodes; a load waits up to 60 s for them to be allocated)',
    readBy,
  },
  shardTargetBytes,
  minShards,
  loadConcurrency: {
    env: 'LOAD_CONCURRENCY',
    // Unset: sized from the cluster's write threads (loader/write-capacity.ts).
    documented: 'from the cluster',
    parse: int(1, 1000),
    meaning:
      'bulk requests a load keeps in flight across all its files; by default one per write thread of the data nodes, plus one. From 8, files load side by side (one per 4, at most 4)',
    readBy,
  },
  loadWorkers: {
    env: 'LOAD_WORKERS',
    // Unset: sized from the cores (loader/parse-pool.ts `poolSize`).
    documented: '2 (none below 4 cores)',
    parse: int(0, 256),
    meaning:
      "worker threads that parse the lines of files over 8 MB into bulk text beside the loader's thread; `0` keeps every file on the loader's thread; each worker adds about 45 MB of peak RSS",
    readBy,
  },
  loadNice: {
    env: 'LOAD_NICE',
    default: 10,
    // Applied to every thread by loader/cli.ts.
    parse: int(0, 19),
    meaning:
      "the loader's CPU priority as `nice`, every thread of it (0–19; 0 = as any process): where it shares cores with Elasticsearch and gateways, their reads go first (10 M events on 2 cores: list p99 during an update 2.4–2.7× idle, a full build ~9 % longer); `0` where nothing is served meanwhile",
    readBy,
  },
  loadSource: {
    env: 'LOAD_SOURCE',
    parse: text,
    meaning: 'what `npm run load -- --follow` follows without an argument, and how often it checks (`90s`, `5m`, …)',
    readBy,
  },
  followEveryMs: { env: 'FOLLOW_EVERY', default: '60s', parse: duration(MIN_FOLLOW_EVERY_MS), row: 'LOAD_SOURCE', readBy },
});
