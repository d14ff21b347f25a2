/**
 * `npm run docs:config`: rewrites README.md's configuration table (between `<!-- config:begin -->`
 * and `<!-- config:end -->`) from the settings declared in src/config/; the rest of README.md is
 * left as it is. test/unit/config-table.test.ts fails while the two differ.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/config.ts';
import { withConfigTable } from '../src/config/table.ts';

const file = path.join(PROJECT_ROOT, 'README.md');
const readme = readFileSync(file, 'utf8');
const updated = withConfigTable(readme);
if (updated === readme) {
  console.log('README.md: the configuration table is up to date');
} else {
  writeFileSync(file, updated);
  console.log('README.md: configuration table rewritten from src/config/');
}
