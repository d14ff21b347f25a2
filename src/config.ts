/**
 * Configuration, read once from the environment, validated and frozen.
 *
 * Every other module receives a `Config` (or the part it needs) as an argument;
 * nothing else reads `process.env`. An invalid value fails start-up with a message
 * naming the variable, never later on a request.
 *
 * Each setting is declared once, in its section under src/config/ (variable, default, parser,
 * meaning, programs); the README's configuration table is generated from there
 * (`npm run docs:config`). This module is the one entry: `loadConfig` and what consumers import.
 */
import { ConfigError, type Env } from './config/parse.ts';
import { type ConfigOf, SECTIONS, SECTION_NAMES, type SectionName } from './config/sections.ts';
import type { Config } from './config/types.ts';

export { DEFAULT_ES_MAX_IN_FLIGHT, DEFAULT_ES_QUEUE, DEFAULT_RESPONSE_CACHE_MB } from './config/admission.ts';
export { parseCycleStarts } from './config/cycles.ts';
export { parseEsUrl } from './config/elasticsearch.ts';
export { PROJECT_ROOT } from './config/files.ts';
export { DEFAULT_CURSOR_SECRET, metricsPrefixOf, parseWorkers } from './config/gateway.ts';
export { DEFAULT_DOWNLOAD_MAX_ROWS, DEFAULT_MAX_CONNECTIONS_PER_CLIENT, DEFAULT_RATE_LIMIT, parseRateLimit, parseStoreUrl, parseTrustedProxies } from './config/limits.ts';
export { DEFAULT_ES_REPLICAS, DEFAULT_KEEP_GENERATIONS, DEFAULT_MIN_SHARDS, DEFAULT_SHARD_TARGET_BYTES, DEFAULT_TOMBSTONE_DAYS, MIN_FOLLOW_EVERY_MS } from './config/loader.ts';
export { ConfigError, type Env, parseDuration } from './config/parse.ts';
export { type ConfigOf, LOADER_SECTIONS, type LoaderConfig, type SectionName } from './config/sections.ts';
export { parseStoreConfig } from './config/store.ts';
export type { Config, CycleStart, LogLevel, QueueOrder, RateLimit, StoreConfig } from './config/types.ts';

/**
 * Reads and validates the environment. Call once, at start-up. A program names the sections it
 * reads (the loader: LOADER_SECTIONS), so that it never refuses to start over a setting of
 * another; the gateway reads them all.
 */
export function loadConfig(env?: Env): Readonly<Config>;
export function loadConfig<N extends SectionName>(env: Env, sections: readonly N[]): Readonly<ConfigOf<N>>;
export function loadConfig(env: Env = process.env, sections: readonly SectionName[] = SECTION_NAMES): Readonly<Partial<Config>> {
  return Object.freeze(Object.assign({}, ...sections.map((name) => SECTIONS[name].read(env))));
}

/**
 * `loadConfig` for a process's entry point: a refused setting is one line naming it and exit 2
 * (as the loader's CLI answers), not a stack trace.
 */
export function loadConfigOrExit(env?: Env): Readonly<Config>;
export function loadConfigOrExit<N extends SectionName>(env: Env, sections: readonly N[]): Readonly<ConfigOf<N>>;
export function loadConfigOrExit(env: Env = process.env, sections: readonly SectionName[] = SECTION_NAMES): Readonly<Partial<Config>> {
  try {
    return loadConfig(env, sections);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`Configuration refused: ${error.message}`);
    process.exit(2);
  }
}
