/**
 * `npm run fuzz [-- --examples N] [--seed S] [--min-requests N]`: property-based fuzzing of the
 * whole API with schemathesis, driven by the gateway's own `/v1/openapi.json`.
 *
 * 1. Elasticsearch as everywhere (scripts/elasticsearch.ts); the sample bundle loaded under its
 *    own index prefix (`fuzz`); the gateway started on a free loopback port, with the per-client
 *    budget, the download limit and admission control off (they would mask what is checked).
 * 2. schemathesis (pinned in scripts/fuzz-requirements.txt) in a virtualenv under `.cache/`,
 *    installed with pip when missing.
 * 3. `schemathesis run` with the checks: no 5xx, status codes, content types and bodies as
 *    documented; valid and invalid inputs (`--mode all`); a fixed seed, so a run is repeatable.
 *    A path parameter naming a record is a real one of the bundle half the time
 *    (./fuzz-dictionaries.ts), so that those routes' cases reach more than their 404.
 * 4. Prints the counts: requests the gateway answered (its own request metrics, so schemathesis'
 *    retries and shrinking are counted too), how many were 5xx, schemathesis' test cases, check
 *    failures and errors (answers it could not check at all), and the duration. Exits non-zero
 *    on any 5xx, failed check or error, or fewer requests than `--min-requests` (10,000).
 *
 * Does not: stop an Elasticsearch it did not start, or touch other index prefixes.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.ts';
import { startServer } from '../src/server.ts';
import { provideElasticsearch, stopElasticsearch } from './elasticsearch.ts';
import { fuzzConfig } from './fuzz-dictionaries.ts';
import { loadServedBundle } from './served-bundle.ts';

/** schemathesis and its dependencies, pinned (pip freeze): a run today generates what a run next year does. */
const REQUIREMENTS = path.join(import.meta.dirname, 'fuzz-requirements.txt');
const requirements = readFileSync(REQUIREMENTS, 'utf8');
const SCHEMATHESIS_VERSION = /^schemathesis==(\S+)$/m.exec(requirements)![1]!;
const CHECKS = ['not_a_server_error', 'status_code_conformance', 'content_type_conformance', 'response_schema_conformance'];

const { values: args } = parseArgs({
  options: {
    examples: { type: 'string', default: '100' },
    seed: { type: 'string', default: '1' },
    'min-requests': { type: 'string', default: '10000' },
    workers: { type: 'string', default: '4' },
  },
});

const log = (line: string) => console.error(`[fuzz] ${line}`);
// Limits off: a 429 or an admission 503 would stand in for the answer the fuzzer must check
// (a 503 also counts as a server error), and every request comes from one address.
const config = loadConfig({
  ...process.env,
  INDEX_PREFIX: 'fuzz',
  PORT: '0',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  DATA_DIR: path.join(process.env.CACHE_DIR ?? '.cache', 'fuzz-data'),
  RATE_LIMIT: 'off',
  EXPORT_CONCURRENCY: 'off',
  ES_MAX_IN_FLIGHT: 'off',
  MAX_CONNECTIONS_PER_CLIENT: 'off',
});
// Keyed on the pins: a changed requirements file gets a fresh virtualenv.
const venv = path.join(config.cacheDir, `schemathesis-${SCHEMATHESIS_VERSION}-${createHash('sha256').update(requirements).digest('hex').slice(0, 8)}`);
const reportDir = path.join(config.cacheDir, 'fuzz-report');

/** The schemathesis executable, installed into the project's virtualenv first when missing. */
function schemathesis(): string {
  const bin = path.join(venv, 'bin', 'schemathesis');
  if (existsSync(bin)) return bin;
  log(`installing schemathesis ${SCHEMATHESIS_VERSION} into ${venv}`);
  const python = process.env.PYTHON ?? 'python3';
  for (const [command, commandArgs] of [
    [python, ['-m', 'venv', venv]],
    [path.join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', '--requirement', REQUIREMENTS]],
  ] as const) {
    const result = spawnSync(command, commandArgs, { stdio: 'inherit' });
    if (result.status !== 0) throw new Error(`${command} ${commandArgs.join(' ')} failed (needs Python 3 with venv and pip; PYTHON names the interpreter)`);
  }
  return bin;
}

/** Requests the gateway answered so far, by status, from its own request-duration histogram. */
async function answered(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const counts = new Map<string, number>();
  const line = new RegExp(`^${config.metricsPrefix}_http_request_duration_seconds_count\\{(.*)\\} (\\d+)$`);
  for (const row of text.split('\n')) {
    const match = line.exec(row);
    const status = match && /status="(\d+)"/.exec(match[1]!)?.[1];
    if (status) counts.set(status, (counts.get(status) ?? 0) + Number(match[2]));
  }
  return counts;
}

function run(command: string, commandArgs: string[], cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code) => resolve(code ?? 1));
  });
}

/**
 * From schemathesis' NDJSON event stream: test cases, failed checks (all, and distinct
 * operation + check), and errors (answers it could not even check, e.g. an undecodable body).
 */
async function schemathesisCounts(file: string): Promise<{ cases: number; failures: number; distinctFailures: string[]; errors: string[] }> {
  type Recorder = { label: string; cases?: Record<string, unknown>; checks?: Record<string, { name: string; status: string }[]> };
  let cases = 0;
  let failures = 0;
  const distinct = new Set<string>();
  const errors: string[] = [];
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    if (line.startsWith('{"NonFatalError"')) {
      const { label, value } = (JSON.parse(line) as { NonFatalError: { label: string; value: { type: string; message: string } } }).NonFatalError;
      errors.push(`${label}: ${value.type}: ${value.message}`);
    }
    if (!line.startsWith('{"ScenarioFinished"')) continue;
    const recorder = (JSON.parse(line) as { ScenarioFinished: { recorder: Recorder } }).ScenarioFinished.recorder;
    cases += Object.keys(recorder.cases ?? {}).length;
    for (const checks of Object.values(recorder.checks ?? {})) {
      for (const check of checks.filter((c) => c.status === 'failure')) {
        failures += 1;
        distinct.add(`${recorder.label}: ${check.name}`);
      }
    }
  }
  return { cases, failures, distinctFailures: [...distinct].sort(), errors };
}

const started = performance.now();
const es = await provideElasticsearch(config, log);
let exitCode = 1;
try {
  const bundleDir = await loadServedBundle(config, es.url, log);
  const binary = schemathesis();
  const gateway = await startServer(config, es.url);
  try {
    const before = await answered(gateway.url);
    await rm(reportDir, { recursive: true, force: true });
    await mkdir(reportDir, { recursive: true });
    const ndjson = path.join(reportDir, 'events.ndjson');
    const configFile = path.join(reportDir, 'schemathesis.toml');
    await writeFile(configFile, await fuzzConfig(bundleDir));
    const commandArgs = [
      '--config-file',
      configFile,
      'run',
      `${gateway.url}/v1/openapi.json`,
      '--checks',
      CHECKS.join(','),
      '--mode',
      'all',
      '--phases',
      'examples,coverage,fuzzing,stateful',
      '--max-examples',
      args.examples,
      '--seed',
      args.seed,
      '--workers',
      args.workers,
      '--generation-database',
      'none',
      '--suppress-health-check',
      'too_slow',
      // A stream's answer never ends (a request would only wait out the client's timeout): the
      // stream routes' parameters and answers are tested in test/integration/stream.test.ts.
      '--exclude-path-regex',
      '/stream$',
      '--report',
      'ndjson',
      '--report-ndjson-path',
      ndjson,
      '--no-color',
    ];
    log(`schemathesis ${commandArgs.join(' ')}`);
    const fuzzStarted = performance.now();
    // Run inside the report directory: schemathesis keeps its crash cache (`.schemathesis/`) in the working directory.
    const status = await run(binary, commandArgs, reportDir);
    const fuzzSeconds = (performance.now() - fuzzStarted) / 1000;
    const after = await answered(gateway.url);
    const delta = [...after].map(([s, n]) => [s, n - (before.get(s) ?? 0)] as const).filter(([, n]) => n > 0);
    const requests = delta.reduce((sum, [, n]) => sum + n, 0);
    const serverErrors = delta.filter(([s]) => Number(s) >= 500).reduce((sum, [, n]) => sum + n, 0);
    const { cases, failures, distinctFailures, errors } = await schemathesisCounts(ndjson);
    const summary = {
      schemathesis: SCHEMATHESIS_VERSION,
      checks: CHECKS,
      requests,
      byStatus: Object.fromEntries(delta.sort()),
      serverErrors,
      testCases: cases,
      failedChecks: failures,
      distinctFailures,
      errors,
      schemathesisExit: status,
      fuzzSeconds: Math.round(fuzzSeconds),
      totalSeconds: Math.round((performance.now() - started) / 1000),
    };
    console.log(JSON.stringify(summary, null, 2));
    const minRequests = Number(args['min-requests']);
    if (requests < minRequests) log(`only ${requests} requests, fewer than --min-requests ${minRequests}`);
    exitCode = status === 0 && serverErrors === 0 && failures === 0 && errors.length === 0 && requests >= minRequests ? 0 : 1;
  } finally {
    await gateway.close();
  }
} finally {
  if (es.origin === 'started') await stopElasticsearch(config, log);
}
process.exitCode = exitCode;
