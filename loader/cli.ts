/**
 * `npm run load -- <source> [--force] [--json]`: loads a bundle into Elasticsearch as a new live
 * generation. The source is a directory, `s3://bucket/prefix` or an `http(s)://` folder: a bundle
 * folder, a `latest/` folder (publish pointer or flat manifest), or the prefix above `latest/`
 * (the AWS_* settings sign `s3://`; retries are printed as they happen). Exit 0 when loaded or
 * already live, 1 when the bundle is refused (with `file:line`, or the URL and status, and the
 * reason), 2 on a usage error. `--json` prints the summary as JSON (the loader benchmark reads it).
 *
 * `npm run load` starts it with 8 MB V8 semi-spaces (package.json): the young generation V8
 * picks on a large machine lets a load's short-lived garbage add ~100 MB of RSS for nothing.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.ts';
import { createClient } from '../src/search/client.ts';
import { isStoreUrl } from '../src/store/location.ts';
import { createObjectStore } from '../src/store/object-store.ts';
import { provideElasticsearch } from '../scripts/elasticsearch.ts';
import { LoadError } from './errors.ts';
import { loadBundle } from './load-bundle.ts';
import { createProgress } from './progress.ts';
import { formatSummary } from './summary.ts';

const USAGE = 'usage: npm run load -- <dir | s3://bucket/prefix | https://host/path> [--force] [--json]';

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ allowPositionals: true, options: { force: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } } });
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const [source, ...extra] = parsed.positionals;
  if (!source || extra.length) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfig();
  const write = (line: string) => console.error(line);
  const { url } = await provideElasticsearch(config, write);
  const client = createClient(url, 120_000);
  try {
    // npm runs scripts in the project root; a relative path means the caller's directory.
    const summary = await loadBundle(isStoreUrl(source) ? source : path.resolve(process.env.INIT_CWD ?? process.cwd(), source), {
      client,
      prefix: config.indexPrefix,
      dataDir: config.dataDir,
      cycleStarts: config.cycleStarts,
      currentCycle: config.currentCycle,
      force: parsed.values.force,
      store: createObjectStore(config.store, {
        onRetry: ({ method, url, reason, attempt, delayMs, offset }) =>
          write(`retrying ${method} ${url} in ${delayMs} ms (${reason}; failure ${attempt} of ${config.store.attempts}${offset ? `, resuming at byte ${offset}` : ''})`),
      }),
      progress: createProgress({ tty: Boolean(process.stderr.isTTY), write }),
    });
    const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
    console.log(parsed.values.json ? JSON.stringify({ ...summary, peakRssMb }) : formatSummary(summary));
    return 0;
  } catch (error) {
    if (error instanceof LoadError) {
      console.error(`load refused: ${error.message}\nthe live generation is unchanged`);
      return 1;
    }
    throw error;
  } finally {
    await client.close();
  }
}

process.exitCode = await main();
