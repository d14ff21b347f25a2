/**
 * `npm run make-bundle -- <dir> [--scale N] [--seed S] [--gzip-only a,b] [--no-events]
 * [--events-per-entity K] [--no-chain-objects] [--label L]`: writes a deterministic export bundle and prints its row
 * counts. Argument parsing and output only; everything else is in write-bundle.ts.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_GZIP_ONLY, writeBundle } from './write-bundle.ts';

const USAGE = 'usage: npm run make-bundle -- <dir> [--scale N] [--seed S] [--gzip-only a,b|none] [--no-events] [--events-per-entity K] [--no-chain-objects] [--label L]';

function integer(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`--${name} must be an integer, got ${value}`);
  return n;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      scale: { type: 'string' },
      seed: { type: 'string' },
      'gzip-only': { type: 'string' },
      'no-events': { type: 'boolean' },
      'events-per-entity': { type: 'string' },
      'no-chain-objects': { type: 'boolean' },
      label: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || positionals.length !== 1) {
    console.error(USAGE);
    process.exitCode = values.help ? 0 : 2;
    return;
  }
  const gzipArg = values['gzip-only'];
  const gzipOnly = gzipArg === undefined ? [...DEFAULT_GZIP_ONLY] : gzipArg === 'none' || gzipArg === '' ? [] : gzipArg.split(',');
  const started = performance.now();
  const result = await writeBundle(positionals[0]!, {
    scale: integer('scale', values.scale, 1),
    seed: integer('seed', values.seed, 1),
    gzipOnly,
    includeEvents: !values['no-events'],
    eventsPerEntity: integer('events-per-entity', values['events-per-entity'], 12),
    includeChainObjects: !values['no-chain-objects'],
    ...(values.label === undefined ? {} : { bundleLabel: values.label }),
  });
  const total = Object.entries(result.rowCounts).reduce((sum, [, n]) => sum + n, 0);
  const width = Math.max(...Object.keys(result.rowCounts).map((name) => name.length));
  for (const [name, count] of Object.entries(result.rowCounts)) console.log(`${name.padEnd(width)}  ${count}`);
  console.log(`${'total'.padEnd(width)}  ${total}`);
  console.log(`wrote ${result.dir} in ${((performance.now() - started) / 1000).toFixed(1)} s (generatedAt ${result.manifest.generatedAt as string})`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
