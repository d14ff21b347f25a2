/**
 * The README's configuration table is generated from the settings declared in src/config/: the
 * region between its markers must be what the declarations make, grouped rows grouped.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/config.ts';
import { TABLE_BEGIN, TABLE_END, configTable, readmeTable, withConfigTable } from '../../src/config/table.ts';

const README = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');

describe('the configuration table', () => {
  it("is in README.md as the declarations make it", () => {
    expect(readmeTable(README), "README.md's configuration table differs from the settings declared in src/config/: run npm run docs:config").toBe(configTable());
  });

  it('keeps grouped settings in one row, and the header the README has always had', () => {
    const table = configTable();
    expect(table.split('\n').slice(0, 2)).toEqual(['| variable | default | meaning |', '|---|---|---|']);
    expect(table).toContain('\n| `PORT` / `HOST` | `8080` / `127.0.0.1` | where the gateway listens');
    expect(table).toContain('\n| `ES_QUEUE` / `ES_QUEUE_MS` | `8` / `1000` | requests that may wait');
    expect(table).toContain('\n| `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN` | — | key that signs');
    expect(table).toContain('\n| `AWS_REGION` (else `AWS_DEFAULT_REGION`) | guessed from the host');
    expect(table).toContain('\n| `LOAD_SOURCE` / `FOLLOW_EVERY` | — / `60s` | what `npm run load -- --follow` follows');
    expect(table).toContain('(`format=csv\\|ndjson`)');
  });

  it('leaves out what users never set', () => {
    expect(configTable()).not.toContain('WORKER_INDEX');
  });

  it('refuses a setting that joins a row no setting before it leads', () => {
    expect(() => configTable([{ env: 'B', default: 1, parse: Number, row: 'A', readBy: ['gateway'] }])).toThrow(/B joins the row of A/);
  });

  it('is rewritten between the markers only', () => {
    const readme = `# Title\n\n${TABLE_BEGIN}\n| old |\n${TABLE_END}\n\nafter\n`;
    expect(withConfigTable(readme)).toBe(`# Title\n\n${TABLE_BEGIN}\n${configTable()}\n${TABLE_END}\n\nafter\n`);
    expect(withConfigTable(withConfigTable(readme))).toBe(withConfigTable(readme));
    expect(() => withConfigTable('# no markers\n')).toThrow(/config:begin/);
  });
});
