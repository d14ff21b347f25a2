/**
 * What a request costs is said once: `COSTS` and the router write docs/operations.md's table
 * (npm run docs:config), every route in it exactly once, and the words clients read (the
 * OpenAPI document, the RATE_LIMIT row) are made from the same numbers.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, loadConfig } from '../../src/config.ts';
import type { Gateway } from '../../src/compose.ts';
import { configTable, generatedRegion } from '../../src/config/table.ts';
import { COSTS, POINTS_IN_WORDS, costTable, requestCost } from '../../src/limits/request-cost.ts';
import { openApiDocument } from '../../src/routes/openapi.ts';
import { routesByCost } from '../../src/routes/operation.ts';
import { composed } from '../../harness/composed.ts';

let gateway: Gateway;
beforeAll(async () => void (gateway = await composed()));

const table = () => costTable(routesByCost(gateway.router), loadConfig({}).exportConcurrency!);

describe('the table of what each request costs', () => {
  it('is in docs/operations.md as COSTS and the router make it', () => {
    const doc = readFileSync(path.join(PROJECT_ROOT, 'docs', 'operations.md'), 'utf8');
    expect(generatedRegion(doc, 'costs'), "docs/operations.md's cost table differs from COSTS and the routes: run npm run docs:config").toBe(table());
  });

  it('names every GET route exactly once, with the points requestCost charges for its class', () => {
    const paths = Object.keys((openApiDocument(gateway.router) as { paths: Record<string, unknown> }).paths);
    const text = table();
    for (const p of paths) expect(text.split(`\`${p}\``).length - 1, p).toBe(1);
    const rows = text.split('\n');
    for (const [cost, routes] of routesByCost(gateway.router)) {
      const row = rows.find((r) => r.includes(`\`${routes[0]}\``))!;
      const points = row.slice(row.lastIndexOf(' | ') + 3);
      const charged = requestCost(cost, {}, false);
      expect(points, `${cost}: ${row}`).toMatch(new RegExp(`^${charged.kind === 'download' ? 'none' : charged.points}\\b`));
    }
  });

  it('gives clients the same numbers in words', () => {
    expect(POINTS_IN_WORDS).toContain(`a list page ${COSTS.list}`);
    expect(JSON.stringify(openApiDocument(gateway.router))).toContain(POINTS_IN_WORDS);
    expect(configTable()).toContain(POINTS_IN_WORDS.replaceAll('|', '\\|'));
  });
});
