/**
 * `npm run bench [-- load|http|es-cost|scale|autocomplete|client|soak|overload|workers|stream|year ...] [--quick] [--scale N] [--http-scale N] [--seconds S]
 * [--rounds R] [--events 1m,10m] [--reuse] [--minutes M] [--overload-scale N] [--only greedy] [--workers 1,2,4] [--streams N] [--exports K] [--no-raw]`: runs the benchmarks (load,
 * http and scale by default; soak, 10 minutes of mixed load, and overload, clients on distinct
 * loopback addresses against the limits, only when named), prints their results
 * as JSON, writes them to `bench/results/<date>.json` (not committed; the run says where) and
 * rewrites the sections of `bench/RESULTS.md` of the benchmarks it ran.
 * Every figure is a ratio against a limit measured in the same run; no thresholds.
 *
 * `--quick`: a short pass (a 200 k-row load, 2 s per target, one round, 200 k and 1 M events).
 * `--reuse`: the scale benchmark measures the event generations already live (from an earlier
 * run) instead of loading each size afresh, e.g. to measure again on a quieter machine.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.ts';
import { createClient } from '../src/search/client.ts';
import { provideElasticsearch } from '../scripts/elasticsearch.ts';
import { benchAutocomplete } from './autocomplete.ts';
import { benchClient } from './client.ts';
import { benchEsCost } from './es-cost.ts';
import { benchFreshness } from './freshness.ts';
import { benchHttp } from './http.ts';
import { benchLoad } from './load.ts';
import { type OverloadPart, benchOverload } from './overload.ts';
import { recordResults } from './results.ts';
import { benchScale, parseSize } from './scale.ts';
import { benchSoak } from './soak.ts';
import { benchStream } from './stream.ts';
import { benchWorkers } from './workers.ts';
import { benchYear } from './year.ts';
import { codeVersion, cpuTimes, describeMachine, quietMachine, stealPercent } from './support.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    quick: { type: 'boolean', default: false },
    reuse: { type: 'boolean', default: false },
    scale: { type: 'string' },
    'http-scale': { type: 'string' },
    seconds: { type: 'string' },
    rounds: { type: 'string' },
    events: { type: 'string' },
    minutes: { type: 'string' },
    'overload-scale': { type: 'string' },
    workers: { type: 'string' },
    streams: { type: 'string' },
    only: { type: 'string' },
    exports: { type: 'string' },
    raw: { type: 'boolean', default: true },
  },
  allowNegative: true,
});
const quick = values.quick;
/** `--only greedy`: the overload bench up to its greedy clients (to iterate on them); the whole of it by default. */
function overloadPart(only: string | undefined): OverloadPart | undefined {
  if (only === undefined || only === 'greedy') return only;
  throw new Error(`--only takes "greedy", got "${only}"`);
}
const which = new Set(positionals.length ? positionals : ['load', 'http', 'scale']);
const log = (line: string) => console.error(line);
const config = loadConfig();
const { url } = await provideElasticsearch(config, log);
const client = createClient(url, 600_000);
const steal: Record<string, number> = {};
const report: Record<string, unknown> = { date: new Date().toISOString(), quick, commit: codeVersion(), machine: { ...(await describeMachine(url)), busyCoresAtStart: await quietMachine(log), stealPercent: steal } };
/** Runs one benchmark, noting the share of the cores' time the hypervisor took meanwhile. */
async function measured<T>(name: string, run: () => Promise<T>): Promise<T> {
  const before = await cpuTimes();
  try {
    return await run();
  } finally {
    steal[name] = stealPercent(before, await cpuTimes());
  }
}
try {
  if (which.has('load')) {
    const scale = Number(values.scale ?? (quick ? 70 : 550));
    report.load = await measured('load', () => benchLoad({ client, esUrl: url, config, scale, log }));
    report.freshness = await measured('freshness', () => benchFreshness({ client, esUrl: url, config, scale, log }));
  }
  if (which.has('http')) {
    const seconds = Number(values.seconds ?? (quick ? 2 : 5));
    const rounds = Number(values.rounds ?? (quick ? 1 : 2));
    report.http = await measured('http', () => benchHttp({ client, esUrl: url, config, scale: Number(values['http-scale'] ?? 28), seconds, rounds, log }));
  }
  if (which.has('es-cost')) {
    const seconds = Number(values.seconds ?? (quick ? 2 : 5));
    const rounds = Number(values.rounds ?? (quick ? 1 : 2));
    report.esCost = await measured('es-cost', () => benchEsCost({ client, esUrl: url, config, scale: Number(values['http-scale'] ?? 28), seconds, rounds, log }));
  }
  if (which.has('scale')) {
    const sizes = (values.events ?? (quick ? '200k,1m' : '1m,10m')).split(',').map(parseSize);
    report.scale = await measured('scale', () => benchScale({ client, esUrl: url, config, sizes, seconds: Number(values.seconds ?? (quick ? 2 : 5)), rounds: Number(values.rounds ?? (quick ? 1 : 2)), reuse: values.reuse, log }));
  }
  if (which.has('autocomplete')) {
    report.autocomplete = await measured('autocomplete', () => benchAutocomplete({ client, esUrl: url, config, seconds: Number(values.seconds ?? (quick ? 2 : 10)), log }));
  }
  if (which.has('client')) {
    report.client = await measured('client', () => benchClient({ client, esUrl: url, config, scale: Number(values.scale ?? (quick ? 70 : 550)), log }));
  }
  if (which.has('overload')) {
    const scale = Number(values['overload-scale'] ?? (quick ? 70 : 550));
    report.overload = await measured('overload', () => benchOverload({ client, esUrl: url, config, scale, seconds: Number(values.seconds ?? (quick ? 6 : 20)), only: overloadPart(values.only), log }));
  }
  if (which.has('stream')) {
    const streams = Number(values.streams ?? (quick ? 100 : 1000));
    report.stream = await measured('stream', () =>
      benchStream({ client, esUrl: url, config, scale: Number(values.scale ?? (quick ? 70 : 550)), streams, seconds: Number(values.seconds ?? (quick ? 2 : 5)), log }),
    );
  }
  if (which.has('workers')) {
    const counts = values.workers?.split(',').map(Number);
    report.workers = await measured('workers', () =>
      benchWorkers({ client, esUrl: url, config, scale: Number(values['http-scale'] ?? 28), seconds: Number(values.seconds ?? (quick ? 2 : 4)), counts, log }),
    );
  }
  if (which.has('year')) {
    const events = parseSize(values.events ?? (quick ? '200k' : '10m'));
    report.year = await measured('year', () =>
      benchYear({ client, esUrl: url, config, events, exports: Number(values.exports ?? (quick ? 2 : 3)), seconds: Number(values.seconds ?? (quick ? 10 : 60)), raw: values.raw, log }),
    );
  }
  if (which.has('soak')) {
    report.soak = await measured('soak', () => benchSoak({ client, esUrl: url, config, minutes: Number(values.minutes ?? (quick ? 2 : 10)), log }));
  }
} finally {
  await client.close();
}
console.log(JSON.stringify(report, null, 2));
const written = await recordResults(report, path.join(import.meta.dirname));
log(`raw results (JSON, not committed): ${written.json}`);
log(written.rewritten.length ? `${written.markdown}: rewrote the sections ${written.rewritten.join(', ')}` : `${written.markdown} left as it was (a quick pass)`);
