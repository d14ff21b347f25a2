/**
 * Which Elasticsearch, and what this project owns in it: read by the gateway, the loader and the
 * provisioning of a development node alike. How the gateway's requests to it are bounded is
 * admission.ts; how the loader builds its indices, loader.ts.
 */
import { ConfigError, matching, text, withoutCredentials } from './parse.ts';
import { section } from './setting.ts';

/**
 * Splits `ES_URL` into node URLs: one URL, or a comma-separated list of the nodes of one cluster
 * (`http://10.0.0.1:9200,http://10.0.0.2:9200`). Each must be an absolute http(s) URL and appear
 * once; trailing slashes are dropped. The client (src/search/client.ts) reads the list back
 * through this function, so there is one spelling of the format.
 */
export function parseEsUrl(raw: string): string[] {
  const urls = raw.split(',').map((part) => part.trim().replace(/\/+$/, ''));
  for (const url of urls) {
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      throw new ConfigError(`ES_URL must be an http(s) URL or a comma-separated list of them, got "${withoutCredentials(url)}"`);
    }
  }
  const repeated = urls.find((url, i) => urls.indexOf(url) !== i);
  if (repeated) throw new ConfigError(`ES_URL lists ${new URL(repeated).host} twice`);
  return urls;
}

export const elasticsearch = section({
  esUrl: {
    env: 'ES_URL',
    // Kept normalised, as the list parseEsUrl reads back.
    parse: (raw) => parseEsUrl(raw).join(','),
    meaning:
      'Elasticsearch to use (8.x or 9.x): one URL, or the nodes of one cluster as a comma-separated list (`http://10.0.0.1:9200,http://10.0.0.2:9200`; each an http(s) URL, listed once). Unset: the project provisions one',
    readBy: ['gateway', 'loader', 'elasticsearch'],
  },
  esHeap: {
    env: 'ES_HEAP',
    default: '1g',
    parse: text,
    meaning: 'heap of a provisioned Elasticsearch',
    readBy: ['elasticsearch'],
  },
  indexPrefix: {
    env: 'INDEX_PREFIX',
    default: 'registry',
    parse: matching(/^[a-z0-9][a-z0-9_-]{0,40}$/, 'lowercase letters, digits, "-" or "_"'),
    meaning: 'prefix of every index and alias (several instances can share a cluster)',
    readBy: ['gateway', 'loader', 'start'],
  },
});
