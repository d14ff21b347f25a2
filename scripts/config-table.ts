/**
 * `npm run docs:config`: rewrites the tables the docs hold that are generated from the code —
 * README.md's configuration table (from the settings declared in src/config/) and
 * docs/operations.md's table of what each request costs (from `COSTS` and every route of the
 * router) — between their markers, the rest of each file as it was. test/unit/config-table.test.ts
 * and test/unit/cost-table.test.ts fail while they differ.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT, loadConfig } from '../src/config.ts';
import { composed } from '../harness/composed.ts';
import { withConfigTable, withGeneratedRegion } from '../src/config/table.ts';
import { costTable } from '../src/limits/request-cost.ts';
import { routesByCost } from '../src/routes/operation.ts';

function rewrite(name: string, make: (text: string) => string, what: string): void {
  const file = path.join(PROJECT_ROOT, name);
  const text = readFileSync(file, 'utf8');
  const updated = make(text);
  if (updated === text) return console.log(`${name}: ${what} is up to date`);
  writeFileSync(file, updated);
  console.log(`${name}: ${what} rewritten`);
}

rewrite('README.md', withConfigTable, 'the configuration table');
// The router as production composes it (harness/composed.ts): no Elasticsearch needs to listen.
const config = loadConfig({ LOG_LEVEL: 'silent' });
const { router } = await composed();
rewrite('docs/operations.md', (text) => withGeneratedRegion(text, 'costs', costTable(routesByCost(router), config.exportConcurrency!)), 'the table of what each request costs');
process.exit(0);
