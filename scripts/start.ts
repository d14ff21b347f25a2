/**
 * `npm start`: everything a fresh clone needs to serve the API.
 * 1. Elasticsearch: ES_URL, else the project's own provisioned one (scripts/elasticsearch.ts).
 * 2. A bundle: BUNDLE_DIR, else the generated sample (deterministic, so it is the same bundle
 *    every time and is loaded once).
 * 3. Load it unless it is already the live generation.
 * 4. Start the gateway on HOST:PORT and print its address. Ctrl-C stops the gateway (see
 *    `serve`); a provisioned Elasticsearch keeps running, and the last line says how to stop it.
 *
 * `--no-load` skips steps 2-3 (serve whatever is live). Provisioning a node is a development
 * convenience of this script: the loader (`npm run load`) and the Docker image
 * (`node src/server.ts`) need `ES_URL`.
 */
import { loadConfigOrExit } from '../src/config.ts';
import { serve } from '../src/server.ts';
import { provideElasticsearch } from './elasticsearch.ts';
import { loadServedBundle } from './served-bundle.ts';

const flags = new Set(process.argv.slice(2));
const config = loadConfigOrExit();
const write = (line: string) => console.error(line);
const { url, origin } = await provideElasticsearch(config, write);
if (!flags.has('--no-load')) await loadServedBundle(config, url, write);
await serve(config, url, {
  note: `(Elasticsearch ${url})`,
  // The node is detached on purpose (the next start reuses it): say so rather than leave it unnoticed.
  onStopped: () => {
    if (origin !== 'ES_URL') write(`Elasticsearch keeps running on ${url}; stop it with \`npm run elasticsearch -- stop\`.`);
  },
});
