/**
 * Time to first render of the explorer against a running gateway, in Debian's Chromium with a
 * cold cache each time: `node web/measure.ts <gateway URL> [--runs N]`. For each view, the
 * median over the runs of: the shell drawn (`explorer-rendered` mark, the bundle parsed and
 * run) and the first rows on screen (the view's data answered and drawn), in ms after
 * navigation start. Prints JSON.
 */
import { chromium } from 'playwright-core';

const VIEWS: [name: string, hash: string, ready: string][] = [
  ['entities (default list)', '#/search', '[data-testid=results] li'],
  ['search q=zeta', '#/search?q=zeta', '[data-testid=results] li'],
  ['events + day timeline', '#/events', '[data-testid=timeline] .u-over[data-bars]'],
  ['killmails npc=true, all cycles', '#/killmails?npc=true&cycles=all', '[data-testid=rows] tbody tr'],
  ['status', '#/status', '[data-testid=generation]'],
];

const args = process.argv.slice(2);
const base = args.find((arg) => !arg.startsWith('--'))?.replace(/\/$/, '');
const runs = Number(args[args.indexOf('--runs') + 1] ?? 5) || 5;
if (!base) {
  console.error('usage: node web/measure.ts <gateway URL> [--runs N]');
  process.exit(2);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--headless', '--no-sandbox'] });
const results: Record<string, { shellMs: number; firstRowsMs: number; runs: number }> = {};
try {
  for (const [name, hash, ready] of VIEWS) {
    const shell: number[] = [];
    const rows: number[] = [];
    for (let run = 0; run < runs; run += 1) {
      // A new context per run: no HTTP cache, no memory of the previous page.
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${base}/explorer/${hash}`);
      await page.locator(ready).first().waitFor({ timeout: 60_000 });
      const timing = await page.evaluate(() => ({ shell: performance.getEntriesByName('explorer-rendered')[0]?.startTime ?? Number.NaN, rows: performance.now() }));
      shell.push(timing.shell);
      rows.push(timing.rows);
      await context.close();
    }
    results[name] = { shellMs: Math.round(median(shell)), firstRowsMs: Math.round(median(rows)), runs };
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify({ gateway: base, results }, null, 2));
