/**
 * `npm run elasticsearch` starts (or reuses) the project's own Elasticsearch and prints its URL;
 * `npm run elasticsearch -- stop` stops it.
 */
import { loadConfig } from '../src/config.ts';
import { provideElasticsearch, stopElasticsearch } from './elasticsearch.ts';

// Only what provisioning reads: a bad gateway or loader setting never stops it.
const config = loadConfig(process.env, ['elasticsearch', 'files']);
const log = (line: string) => console.error(line);
const [command = 'start'] = process.argv.slice(2);

if (command === 'stop') {
  await stopElasticsearch(config, log);
} else if (command === 'start') {
  const { url } = await provideElasticsearch(config, log);
  console.log(url);
} else {
  console.error('usage: npm run elasticsearch [-- start|stop]');
  process.exitCode = 2;
}
