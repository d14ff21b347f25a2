/**
 * Configuration parsing that decides how the gateway reaches Elasticsearch: `ES_URL` as one URL
 * or a list of a cluster's nodes, and the retry rule each client gets from it; the limits
 * (per-client budget, trusted proxies, API keys, downloads, admission control); and the sections
 * settings are declared in, each program reading only its own.
 */
import { describe, expect, it } from 'vitest';
import { availableParallelism } from 'node:os';
import {
  ConfigError,
  DEFAULT_DOWNLOAD_MAX_ROWS,
  DEFAULT_ES_MAX_IN_FLIGHT,
  DEFAULT_ES_QUEUE,
  DEFAULT_ES_REPLICAS,
  DEFAULT_KEEP_GENERATIONS,
  DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
  DEFAULT_RATE_LIMIT,
  DEFAULT_RESPONSE_CACHE_MB,
  DEFAULT_SHARD_TARGET_BYTES,
  DEFAULT_TOMBSTONE_DAYS,
  LOADER_SECTIONS,
  loadConfig,
  metricsPrefixOf,
  parseEsUrl,
  parseRateLimit,
} from '../../src/config.ts';
import { SECTIONS } from '../../src/config/sections.ts';
import { variablesOf } from '../../src/config/setting.ts';
import { maxRetriesFor } from '../../src/search/client.ts';

describe('ES_URL', () => {
  it.each([
    ['http://127.0.0.1:9200', ['http://127.0.0.1:9200']],
    ['http://127.0.0.1:9200/', ['http://127.0.0.1:9200']],
    ['https://es.example:9243/prefix//', ['https://es.example:9243/prefix']],
    ['http://a:9200, http://b:9200/ ,http://c:9200', ['http://a:9200', 'http://b:9200', 'http://c:9200']],
  ])('%s is the node list %j', (raw, nodes) => {
    expect(parseEsUrl(raw)).toEqual(nodes);
  });

  it('is kept in config as the normalised list', () => {
    expect(loadConfig({ ES_URL: ' http://a:9200/ ,http://b:9200 ' }).esUrl).toBe('http://a:9200,http://b:9200');
    expect(loadConfig({}).esUrl).toBeUndefined();
  });

  it.each([['localhost:9200'], ['ftp://a:21'], ['http://a:9200,'], ['http://a:9200,,http://b:9200'], ['not a url'], ['http://a:9200,http://a:9200/']])(
    '%s is refused naming ES_URL',
    (raw) => {
      expect(() => loadConfig({ ES_URL: raw })).toThrow(ConfigError);
      expect(() => loadConfig({ ES_URL: raw })).toThrow(/^ES_URL /);
    },
  );

  it('never echoes credentials of a refused URL', () => {
    expect(() => parseEsUrl('http://user:secret@a:9200,ftp://user:secret@b')).toThrow(/^(?!.*secret)/s);
  });
});

describe('retry rule', () => {
  it('the gateway fails fast on one node and retries exactly once over several', () => {
    expect(maxRetriesFor('failover', 1)).toBe(0);
    expect(maxRetriesFor('failover', 2)).toBe(1);
    expect(maxRetriesFor('failover', 3)).toBe(1);
  });

  it('the loader keeps retrying with backoff whatever the node count', () => {
    expect(maxRetriesFor('backoff', 1)).toBe(2);
    expect(maxRetriesFor('backoff', 3)).toBe(2);
  });
});

describe('limit configuration', () => {
  it('defaults to 50 points per second, bursts of 100, 4 downloads, admission on', () => {
    const config = loadConfig({});
    expect(config.rateLimit).toEqual({ rate: 50, burst: 100, windowSeconds: 2 });
    expect(config.exportConcurrency).toBe(4);
    expect(config.maxConnectionsPerClient).toBe(DEFAULT_MAX_CONNECTIONS_PER_CLIENT);
    expect(config.esMaxInFlight).toBeGreaterThan(0);
    expect(config.trustedProxies).toEqual([]);
    expect(config.apiKeys).toEqual([]);
  });

  it('turns each limit off', () => {
    const config = loadConfig({ RATE_LIMIT: 'off', EXPORT_CONCURRENCY: 'off', ES_MAX_IN_FLIGHT: 'OFF', MAX_CONNECTIONS_PER_CLIENT: 'off' });
    expect(config.rateLimit).toBeUndefined();
    expect(config.maxConnectionsPerClient).toBeUndefined();
    expect(config.exportConcurrency).toBeUndefined();
    expect(config.esMaxInFlight).toBeUndefined();
  });

  it('reads MAX_CONNECTIONS_PER_CLIENT as a count of at least 1, and refuses anything else naming it', () => {
    expect(loadConfig({ MAX_CONNECTIONS_PER_CLIENT: '3' }).maxConnectionsPerClient).toBe(3);
    for (const raw of ['0', '-1', '2.5', 'many', '100001']) {
      expect(() => loadConfig({ MAX_CONNECTIONS_PER_CLIENT: raw }), raw).toThrow(/^MAX_CONNECTIONS_PER_CLIENT must be an integer from 1 to 100000/);
    }
  });

  it.each([['10/15'], ['0/10'], ['50'], ['100/50'], ['fast']])('refuses RATE_LIMIT=%s naming it', (raw) => {
    expect(() => parseRateLimit(raw)).toThrow(ConfigError);
    expect(() => loadConfig({ RATE_LIMIT: raw })).toThrow(/^RATE_LIMIT /);
  });

  it('reads TRUSTED_PROXIES as addresses and CIDR blocks, and refuses anything else', () => {
    expect(loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8, 192.0.2.1,::1, fd00::/8' }).trustedProxies).toEqual(['10.0.0.0/8', '192.0.2.1', '::1', 'fd00::/8']);
    for (const raw of ['10.0.0.0/33', 'proxy.local', '10.0.0.1/8/1', '']) {
      if (raw) expect(() => loadConfig({ TRUSTED_PROXIES: raw }), raw).toThrow(/^TRUSTED_PROXIES /);
    }
  });

  it('orders the admission queue adaptively unless ES_QUEUE_ORDER=fifo, and refuses any other order', () => {
    expect(loadConfig({}).esQueueOrder).toBe('adaptive');
    expect(loadConfig({ ES_QUEUE_ORDER: 'fifo' }).esQueueOrder).toBe('fifo');
    expect(() => loadConfig({ ES_QUEUE_ORDER: 'lifo' })).toThrow(/^ES_QUEUE_ORDER /);
  });

  it('refuses short API keys', () => {
    expect(loadConfig({ API_KEYS: 'a-long-enough-key-1,a-long-enough-key-2' }).apiKeys).toHaveLength(2);
    expect(() => loadConfig({ API_KEYS: 'short' })).toThrow(/^API_KEYS /);
  });
});

describe('metrics prefix', () => {
  it('follows the registry name the gateway answers in meta.registry, unless set', () => {
    expect(loadConfig({}).metricsPrefix).toBe('blackrelay_api');
    expect(loadConfig({ REGISTRY_NAME: 'My-Registry 2' }).metricsPrefix).toBe('my_registry');
    expect(loadConfig({ REGISTRY_NAME: 'x', METRICS_PREFIX: 'custom_api' }).metricsPrefix).toBe('custom_api');
    expect(metricsPrefixOf('---')).toBe('registry_api');
  });
});

describe('workers and the shared budget', () => {
  it('runs one process unless WORKERS says otherwise; auto is the cores Node may use', () => {
    expect(loadConfig({}).workers).toBe(1);
    expect(loadConfig({ WORKERS: '4' }).workers).toBe(4);
    expect(loadConfig({ WORKERS: 'auto' }).workers).toBe(availableParallelism());
    for (const raw of ['0', '-1', 'many', '2.5', '1000']) expect(() => loadConfig({ WORKERS: raw }), raw).toThrow(/WORKERS/);
  });

  it('takes a redis:// or rediss:// RATE_LIMIT_STORE, never echoing its password', () => {
    expect(loadConfig({}).rateLimitStore).toBeUndefined();
    expect(loadConfig({ RATE_LIMIT_STORE: 'redis://10.0.0.5:6379' }).rateLimitStore).toBe('redis://10.0.0.5:6379');
    expect(loadConfig({ RATE_LIMIT_STORE: 'rediss://:pw@cache:6380/2' }).rateLimitStore).toBe('rediss://:pw@cache:6380/2');
    expect(() => loadConfig({ RATE_LIMIT_STORE: 'http://cache:6379' })).toThrow(/RATE_LIMIT_STORE/);
    expect(() => loadConfig({ RATE_LIMIT_STORE: 'memcached://user:secret@cache' })).toThrow(/^(?!.*secret)/);
  });
});

describe('LOAD_WORKERS', () => {
  it('is unset by default (sized from the cores), 0 turns the pool off', () => {
    expect(loadConfig({}).loadWorkers).toBeUndefined();
    expect(loadConfig({ LOAD_WORKERS: '0' }).loadWorkers).toBe(0);
    expect(loadConfig({ LOAD_WORKERS: '6' }).loadWorkers).toBe(6);
    expect(() => loadConfig({ LOAD_WORKERS: '-1' })).toThrow(/^LOAD_WORKERS /);
  });
});

describe('LOAD_CONCURRENCY', () => {
  it('is left to the cluster unless set, and refuses anything but a count from 1', () => {
    expect(loadConfig({}).loadConcurrency).toBeUndefined();
    expect(loadConfig({ LOAD_CONCURRENCY: '12' }).loadConcurrency).toBe(12);
    expect(() => loadConfig({ LOAD_CONCURRENCY: '0' })).toThrow(/^LOAD_CONCURRENCY /);
    expect(() => loadConfig({ LOAD_CONCURRENCY: 'many' })).toThrow(/^LOAD_CONCURRENCY /);
  });
});

describe('sections', () => {
  const sections = Object.values(SECTIONS);
  const settings = sections.flatMap((section) => Object.values(section.settings));

  it('give every Config key once, and nothing else', () => {
    const keys = sections.flatMap((section) => section.keys);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.toSorted()).toEqual(Object.keys(loadConfig({})).toSorted());
  });

  it('declare every variable once, each read by some program', () => {
    const variables = settings.flatMap((setting) => [...variablesOf(setting), ...(setting.else ? [setting.else] : [])]);
    expect(new Set(variables).size).toBe(variables.length);
    for (const setting of settings) expect(setting.readBy.length, variablesOf(setting)[0]).toBeGreaterThan(0);
    // Only the primary sets WORKER_INDEX, in its workers' environments.
    expect(settings.filter((setting) => setting.internal).map((setting) => setting.env)).toEqual(['WORKER_INDEX']);
  });

  it('export defaults that are what an unset variable reads as', () => {
    const config = loadConfig({});
    expect(config.keepGenerations).toBe(DEFAULT_KEEP_GENERATIONS);
    expect(config.tombstoneDays).toBe(DEFAULT_TOMBSTONE_DAYS);
    expect(config.esReplicas).toBe(DEFAULT_ES_REPLICAS);
    expect(config.shardTargetBytes).toBe(DEFAULT_SHARD_TARGET_BYTES);
    expect(config.shardTargetBytes).toBe(25 * 1024 ** 3);
    expect(config.downloadMaxRows).toBe(DEFAULT_DOWNLOAD_MAX_ROWS);
    expect(config.esMaxInFlight).toBe(DEFAULT_ES_MAX_IN_FLIGHT);
    expect(config.esQueue).toBe(DEFAULT_ES_QUEUE);
    expect(config.responseCacheBytes).toBe(DEFAULT_RESPONSE_CACHE_MB * 1024 * 1024);
    expect(config.rateLimit).toEqual(parseRateLimit(DEFAULT_RATE_LIMIT));
  });

  it('read blank as unset, and a derived default from the setting it derives from', () => {
    expect(loadConfig({ PORT: '  ', TRUSTED_PROXIES: '' })).toMatchObject({ port: 8080, trustedProxies: [] });
    expect(loadConfig({ CACHE_DIR: '/tmp/cache' }).dataDir).toBe('/tmp/cache/data');
    expect(loadConfig({ CACHE_DIR: '/tmp/cache', DATA_DIR: '/srv/data' }).dataDir).toBe('/srv/data');
  });
});

describe('what each program reads', () => {
  it('the loader starts whatever the gateway-only settings say', () => {
    const env = { RATE_LIMIT: 'fast', METRICS_PREFIX: 'Bad-Prefix', WORKERS: 'many', ES_REQUEST_TIMEOUT_MS: 'soon', STREAMS_MAX: '0' };
    expect(() => loadConfig(env)).toThrow(ConfigError);
    const config = loadConfig(env, LOADER_SECTIONS);
    expect(config).toMatchObject({ indexPrefix: 'registry', keepGenerations: DEFAULT_KEEP_GENERATIONS, followEveryMs: 60_000 });
    expect(Object.isFrozen(config)).toBe(true);
    expect('rateLimit' in config).toBe(false);
  });

  it.each([
    ['LOAD_NICE', '20', /^LOAD_NICE must be an integer from 0 to 19, got "20"$/],
    ['KEEP_GENERATIONS', '0', /^KEEP_GENERATIONS /],
    ['ES_URL', 'localhost:9200', /^ES_URL /],
    ['INDEX_PREFIX', 'Upper', /^INDEX_PREFIX /],
    ['CYCLE_STARTS', 'soon', /^CYCLE_STARTS /],
    ['AWS_REGION', 'Nowhere!', /^AWS_REGION /],
    ['FOLLOW_EVERY', '10ms', /^FOLLOW_EVERY /],
  ])('a bad %s still stops the loader', (name, raw, message) => {
    expect(() => loadConfig({ [name]: raw }, LOADER_SECTIONS)).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: raw }, LOADER_SECTIONS)).toThrow(message);
  });

  it("the loader's sections are those that hold a setting it reads", () => {
    const reads = Object.entries(SECTIONS)
      .filter(([, section]) => Object.values(section.settings).some((setting) => setting.readBy.includes('loader')))
      .map(([name]) => name);
    expect([...LOADER_SECTIONS].toSorted()).toEqual(reads.toSorted());
  });
});
