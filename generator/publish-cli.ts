/**
 * `npm run publish-bundle -- <bundleDir> <dir | s3://bucket/prefix> [--flat] [--bundle-id ID]`:
 * publishes a bundle directory as the registry does (publish.ts), signing with the AWS_*
 * variables for an `s3://` target (AWS_ENDPOINT_URL_S3 for R2, MinIO or moto). Prints where the
 * pointer is. Argument parsing and output only.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.ts';
import { isStoreUrl } from '../src/store/location.ts';
import { createObjectStore } from '../src/store/object-store.ts';
import { publishBundle } from './publish.ts';

const USAGE = 'usage: npm run publish-bundle -- <bundleDir> <dir | s3://bucket/prefix> [--flat] [--bundle-id ID]';

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { flat: { type: 'boolean', default: false }, 'bundle-id': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help || positionals.length !== 2) {
    console.error(USAGE);
    return values.help ? 0 : 2;
  }
  // Only the store's settings: a bad gateway or loader setting never stops a publication.
  const config = loadConfig(process.env, ['store']);
  // npm runs scripts in the project root; relative paths mean the caller's directory.
  const cwd = process.env.INIT_CWD ?? process.cwd();
  const [bundleDir, target] = [path.resolve(cwd, positionals[0]!), isStoreUrl(positionals[1]!) ? positionals[1]! : path.resolve(cwd, positionals[1]!)];
  const result = await publishBundle(bundleDir, target, {
    layout: values.flat ? 'flat' : 'pointer',
    store: createObjectStore(config.store),
    ...(values['bundle-id'] ? { bundleId: values['bundle-id'] } : {}),
  });
  console.log(`published bundle ${result.bundleId} to ${result.bundle}; ${result.latest} written last`);
  return 0;
}

process.exitCode = await main();
