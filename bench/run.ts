/**
 * `npm run bench [-- load|http] [--scale N] [--seconds S]`: runs the benchmarks and prints
 * their results as JSON (ratios against baselines measured in the same run; no thresholds).
 */
import { parseArgs } from 'node:util';
import { benchHttp } from './http.ts';
import { benchLoad } from './load.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { scale: { type: 'string', default: '20' }, seconds: { type: 'string', default: '5' } },
});
const which = positionals[0] ?? 'all';
const scale = Number(values.scale);
const seconds = Number(values.seconds);
const log = (line: string) => console.error(line);
const report: Record<string, unknown> = { scale };
if (which === 'all' || which === 'load') report.load = await benchLoad(scale, log);
if (which === 'all' || which === 'http') report.http = await benchHttp(scale, seconds, log);
console.log(JSON.stringify(report, null, 2));
