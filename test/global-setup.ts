/**
 * One Elasticsearch for the whole integration run, handed to test files as `inject('esUrl')`:
 * `ES_URL` when set; else a Testcontainers container when an engine is reachable (CI takes
 * this path); else the project's own native node (scripts/elasticsearch.ts).
 */
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../src/config.ts';
import { provideElasticsearch } from '../scripts/elasticsearch.ts';
import { containerEngineReachable, startElasticsearchContainer } from './support/elasticsearch-container.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    esUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const config = loadConfig();
  const log = (line: string) => console.error(`[elasticsearch] ${line}`);
  if (!config.esUrl && (await containerEngineReachable())) {
    const container = await startElasticsearchContainer(config.cacheDir, '1g');
    log(`Testcontainers: ${container.describe} at ${container.url}`);
    project.provide('esUrl', container.url);
    return () => container.stop();
  }
  const provided = await provideElasticsearch(config, log);
  log(`${provided.origin}: ${provided.url}`);
  project.provide('esUrl', provided.url);
  return undefined;
}
