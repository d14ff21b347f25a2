/**
 * The reference explorer (blackrelay/registry-site) keeps working unchanged: each request it
 * sends — every tab it offers (src/config/site.ts) with its form's parameters (`q`, `cycles`,
 * `environment`, `limit`, `profile=known` on current characters), and the detail reads of a row
 * it opens — answers the same `data`, page after page through `nextCursor`, as main answered
 * before the query-power work, recorded in test/fixtures/explorer/answers.json.
 *
 * Each page is kept as its row ids and a SHA-256 of its `data`, so any change to a row, its order
 * or the page boundaries fails. `RECORD_EXPLORER_FIXTURES=1` rewrites the fixture (only ever
 * from a main that predates a change under test).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';

const FIXTURE = path.join(import.meta.dirname, '../fixtures/explorer/answers.json');
const RECORD = process.env.RECORD_EXPLORER_FIXTURES === '1';

/** The explorer's tabs (registry-site src/config/site.ts). */
const TABS = [
  '/v1/search',
  '/v1/current/characters',
  '/v1/current/tribes',
  '/v1/current/systems',
  '/v1/current/regions',
  '/v1/current/constellations',
  '/v1/current/assemblies',
  '/v1/current/gates',
  '/v1/current/items',
  '/v1/current/materials',
  '/v1/current/enemies',
  '/v1/events',
  '/v1/killmails',
  '/v1/sources',
];

/** Its form: the opening request, then what a user types or picks. */
const FORMS = ['environment=stillness&limit=50', 'environment=stillness&limit=50&cycles=all', 'environment=stillness&limit=20&cycles=5', 'q=a&environment=stillness&limit=50'];

function requestsOf(tab: string): string[] {
  return FORMS.map((form) => `${tab}?${form}${tab === '/v1/current/characters' ? '&profile=known' : ''}`);
}

interface Page {
  ids: unknown[];
  sha256: string;
}

const pageOf = (data: unknown): Page => ({
  ids: Array.isArray(data) ? data.map((row: any) => row?.id ?? row?.entity?.id ?? null) : [],
  sha256: createHash('sha256').update(JSON.stringify(data)).digest('hex'),
});

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({ name: 'explorer-compat', scale: 2, seed: 1 });
}, 300_000);

afterAll(() => gw?.close());

/** Every page of a request, following nextCursor. */
async function pages(request: string): Promise<Page[]> {
  const found: Page[] = [];
  let cursor: string | undefined;
  do {
    const url = cursor === undefined ? request : `${request}&cursor=${encodeURIComponent(cursor)}`;
    const { status, body } = await gw.get(url, { headers: { accept: 'application/json' } });
    expect(status, `${url}: ${JSON.stringify(body?.error)}`).toBe(200);
    expect(body.meta).toMatchObject({ registry: 'blackrelay-api', apiVersion: 'v1' });
    found.push(pageOf(body.data));
    cursor = body.nextCursor;
    expect(found.length, request).toBeLessThan(500);
  } while (cursor !== undefined);
  return found;
}

/** The detail reads the explorer makes for the first rows of its opening tabs. */
async function detailRequests(): Promise<string[]> {
  const first = async (route: string) => (await gw.get(`${route}?environment=stillness&limit=3&cycles=all`)).body.data as any[];
  const enc = encodeURIComponent;
  return [
    ...(await first('/v1/search')).flatMap((row) => [`/v1/entities/${enc(row.id)}`, `/v1/entities/${enc(row.id)}/history`]),
    ...(await first('/v1/events')).map((row) => `/v1/events/${enc(row.id)}`),
    ...(await first('/v1/killmails')).map((row) => `/v1/killmails/${enc(row.id)}`),
    ...(await first('/v1/sources')).map((row) => `/v1/sources/${enc(row.id)}`),
  ];
}

describe('the reference explorer against this gateway', () => {
  it('answers every list request with the recorded pages, in order, through nextCursor', async () => {
    const answers: Record<string, Page[]> = {};
    for (const tab of TABS) for (const request of requestsOf(tab)) answers[request] = await pages(request);
    const details: Record<string, unknown> = {};
    for (const request of await detailRequests()) {
      const { status, body } = await gw.get(request);
      expect(status, request).toBe(200);
      details[request] = pageOf(body.data).sha256;
    }
    if (RECORD) {
      writeFileSync(FIXTURE, `${JSON.stringify({ lists: answers, details }, null, 1)}\n`);
      return;
    }
    const recorded = JSON.parse(readFileSync(FIXTURE, 'utf8'));
    expect(Object.keys(answers)).toEqual(Object.keys(recorded.lists));
    for (const [request, found] of Object.entries(answers)) expect(found, request).toEqual(recorded.lists[request]);
    expect(details).toEqual(recorded.details);
  });
});
