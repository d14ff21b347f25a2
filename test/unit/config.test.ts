/**
 * Configuration parsing that decides how the gateway reaches Elasticsearch: `ES_URL` as one URL
 * or a list of a cluster's nodes, and the retry rule each client gets from it.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseEsUrl } from '../../src/config.ts';
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
