/**
 * Filtered lists as files (`format=csv|ndjson`), against a real Elasticsearch, every expectation
 * computed from the bundle files: CSV parsed back with a real parser (csv-parse) including the
 * summary with a comma, quotes, CRLF and U+2028 and the non-ASCII names; NDJSON rows equal to the
 * paged JSON rows in the same order; `select` columns; the row cap and its headers; a download
 * the client cuts off frees its point in time (the index's open search contexts return to where
 * they were); downloads limited by how many one client has in flight; Elasticsearch lost
 * mid-download cuts that download, says why in the log, and leaves the gateway answering.
 */
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { type BundleRow, readAllRows } from '../../generator/read-bundle.ts';
import { createClient } from '../../src/search/client.ts';
import { startServer } from '../../src/server.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { captureLog } from '../support/log-capture.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';
import { expectError, lastWins, walk } from '../support/expect.ts';

let gw: TestGateway;
let entities: BundleRow[];
let events: BundleRow[];
const es = createClient(inject('esUrl'), 60_000);

beforeAll(async () => {
  // Scale 12: some 14,000 events, several megabytes of NDJSON, more than socket buffers hold,
  // so a download the client stops reading stays open on the gateway.
  gw = await startTestGateway({ name: 'download', scale: 12, seed: 61 });
  entities = lastWins(await readAllRows(gw.bundleDir, 'entities.jsonl'), (r) => r.id);
  events = lastWins(await readAllRows(gw.bundleDir, 'events.jsonl'), (r) => r.id);
}, 300_000);

afterAll(async () => {
  await gw?.close();
  await es.close();
});

/** The events index's open search contexts (a point in time holds one per shard until closed). */
async function openContexts(): Promise<number> {
  const stats = await es.indices.stats({ index: `${gw.prefix}-events`, metric: 'search' });
  return stats._all.total?.search?.open_contexts ?? 0;
}

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let tries = 0; tries < 100; tries += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`never happened: ${what}`);
}

/** A CSV cell back to the value the JSON answer holds: nested values are JSON text, absent ones empty, text a spreadsheet would run led by `'`. */
function cellValue(text: string, expected: unknown): unknown {
  if (text === '') return undefined;
  if (typeof expected === 'string' && /^[=+\-@\t\r]/.test(expected)) return text.startsWith("'") ? text.slice(1) : `no ' before ${text}`;
  return typeof expected === 'object' || typeof expected === 'number' || typeof expected === 'boolean' ? JSON.parse(text) : text;
}

describe('filtered lists as files', () => {
  it('answers a CSV of the entity list: a header row, CRLF, every row of the list in its order, each as in entities.jsonl', async () => {
    const res = await gw.get('/v1/entities?cycles=all&format=csv');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="entities[^"]*\.csv"$/);
    const paged = (await walk(gw, '/v1/entities?cycles=all', 200)).rows;
    expect(res.headers.get('x-total-count')).toBe(String(paged.length));
    expect(res.headers.get('x-truncated')).toBeNull();

    expect(res.text.endsWith('\r\n')).toBe(true);
    const [header, ...records] = parse(res.text, { relaxQuotes: false, bom: false }) as string[][];
    expect(header![0]).toBe('id');
    expect(new Set(header)).toEqual(new Set(['id', 'slug', 'entityType', 'name', 'displayName', 'summary', 'environment', 'cycle', 'updatedAt']));
    expect(records.map((r) => r[0])).toEqual(paged.map((r) => r.id));
    const byId = new Map(entities.map((r) => [r.id as string, r]));
    for (const record of records) {
      const row = byId.get(record[0]!)!;
      header!.forEach((column, i) => expect(cellValue(record[i]!, row[column]), `${row.id} ${column}`).toEqual(row[column]));
    }
    // The bundle's hardest values are among them: quotes, a comma, CR LF, U+2028 and non-ASCII names.
    const listed = new Set(records.map((r) => r[0]));
    const hard = entities.find((r) => listed.has(r.id) && /[",\r\n]/.test(String(r.summary ?? '')));
    expect(hard, 'a listed entity whose summary needs quoting').toBeDefined();
    expect(entities.some((r) => listed.has(r.id) && /[^\x00-\x7f]/.test(String(r.name)))).toBe(true);
  });

  it('answers NDJSON: exactly the rows of the paged JSON list, in its order, one per line (events, nested payloads)', async () => {
    const res = await gw.get('/v1/events?cycles=all&format=ndjson');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    const lines = res.text.split('\n');
    expect(lines.pop()).toBe('');
    const paged = (await walk(gw, '/v1/events?cycles=all', 200, 200)).rows;
    expect(lines.map((line) => JSON.parse(line))).toEqual(paged);
    const expected = events.filter((r) => r.environment === gw.config.defaultEnvironment);
    expect(lines.length).toBe(expected.length);
    expect(res.headers.get('x-total-count')).toBe(String(expected.length));
  });

  it('takes the filters, and select for the columns (id first); nested values as JSON text', async () => {
    const kind = events[0]!.kind as string;
    const res = await gw.get(`/v1/events?cycles=all&kind=${encodeURIComponent(kind)}&select=kind,payload&format=csv`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toContain(`kind-${kind.replace(/[^A-Za-z0-9._-]+/g, '_')}`);
    const [header, ...records] = parse(res.text) as string[][];
    expect(header).toEqual(['id', 'kind', 'payload']);
    const expected = new Map(events.filter((r) => r.environment === gw.config.defaultEnvironment && r.kind === kind).map((r) => [r.id as string, r]));
    expect(records.length).toBe(expected.size);
    for (const [id, k, payload] of records) {
      expect(k).toBe(kind);
      expect(payload === '' ? undefined : JSON.parse(payload!)).toEqual(expected.get(id!)!.payload);
    }
  });

  it('cuts the file at DOWNLOAD_MAX_ROWS and says so (X-Truncated, X-Total-Count)', async () => {
    const small = await startServer({ ...gw.config, downloadMaxRows: 25 }, inject('esUrl'));
    try {
      const response = await fetch(`${small.url}/v1/events?cycles=all&format=ndjson`);
      const text = await response.text();
      expect(response.headers.get('x-truncated')).toBe('true');
      expect(response.headers.get('x-total-count')).toBe('25');
      const paged = (await gw.get('/v1/events?cycles=all&limit=25')).body.data;
      expect(text.trim().split('\n').map((line) => JSON.parse(line))).toEqual(paged);
    } finally {
      await small.close();
    }
  });

  it('frees the point in time of a download the client cuts off, and of a HEAD', async () => {
    const before = await openContexts();
    const abort = new AbortController();
    const response = await fetch(`${gw.url}/v1/events?cycles=all&format=ndjson`, { signal: abort.signal });
    const reader = response.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    // Not read further: the gateway waits on the socket with its point in time open.
    await eventually(async () => (await openContexts()) > before, 'the point in time opened');
    abort.abort();
    await eventually(async () => (await openContexts()) === before, 'the point in time closed after the client left');

    const head = await fetch(`${gw.url}/v1/events?cycles=all&format=csv`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('x-total-count')).toBe(String(events.filter((r) => r.environment === gw.config.defaultEnvironment).length));
    await eventually(async () => (await openContexts()) === before, 'the point in time of a HEAD closed');
  });

  it('limits downloads by how many one client has in flight (EXPORT_CONCURRENCY), not by rows', async () => {
    const limited = await startServer({ ...gw.config, exportConcurrency: 2 }, inject('esUrl'));
    const aborts: AbortController[] = [];
    try {
      const open = async () => {
        const abort = new AbortController();
        aborts.push(abort);
        return fetch(`${limited.url}/v1/events?cycles=all&format=ndjson`, { signal: abort.signal });
      };
      const [a, b] = [await open(), await open()];
      expect([a.status, b.status]).toEqual([200, 200]);
      const third = await fetch(`${limited.url}/v1/events?cycles=all&format=ndjson`);
      expect(third.status).toBe(429);
      expect(((await third.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
      // A page of the same list is not a download: it is answered.
      expect((await fetch(`${limited.url}/v1/events?cycles=all&limit=1`)).status).toBe(200);
    } finally {
      for (const abort of aborts) abort.abort();
      await limited.close();
    }
  });

  it('cuts a download whose Elasticsearch goes away mid-file, logs why, and answers again once it is back', async () => {
    const proxy = await startTcpProxy(inject('esUrl'));
    const log = captureLog();
    const cut = await startServer({ ...gw.config, logLevel: 'info' }, proxy.url, { logDestination: log.destination });
    try {
      const response = await fetch(`${cut.url}/v1/events?cycles=all&format=ndjson`);
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      let received = (await reader.read()).value!.length;
      await proxy.down();
      // The rest of the file never comes: the body ends in an error, not as a complete file.
      const rest = (async () => {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return 'complete';
          received += value.length;
        }
      })();
      await expect(rest).rejects.toThrow();
      const lines = events.filter((r) => r.environment === gw.config.defaultEnvironment).length;
      expect(received).toBeLessThan(lines * 100);
      await expect.poll(() => log.find('download cut off by a failure').length).toBe(1);
      expect(log.find('download cut off by a failure')[0]!.level).toBe(40);
      await proxy.up();
      const again = await fetch(`${cut.url}/v1/events?cycles=all&limit=1`);
      expect(again.status).toBe(200);
    } finally {
      await cut.close();
      await proxy.close();
    }
  });

  it('refuses a format it does not know, and format with group_by', async () => {
    expectError(await gw.get('/v1/events?format=xml'), 400, 'bad_request', 'format');
    const both = await gw.get('/v1/events?format=csv&group_by=kind');
    expect(both.status).toBe(400);
    expect(both.body.error.message).toMatch(/group_by/);
  });

  it('answers the entity subroutes and current collections as files too', async () => {
    // An entity with facts, relations and sources (entity sources are reshaped: the nested source).
    const counts = async (file: string, key: string) => new Set((await readAllRows(gw.bundleDir, file)).map((r) => r[key] as string));
    const [withFacts, withSources, relations] = await Promise.all([counts('facts.jsonl', 'entityId'), counts('entity_sources.jsonl', 'entityId'), readAllRows(gw.bundleDir, 'relations.jsonl')]);
    const related = new Set(relations.flatMap((r) => [r.subjectEntityId as string, r.objectEntityId as string]));
    const entity = entities.find((r) => withFacts.has(r.id) && withSources.has(r.id) && related.has(r.id))!;
    expect(entity).toBeDefined();
    for (const sub of ['facts', 'relations', 'sources']) {
      const route = `/v1/entities/${encodeURIComponent(entity.id)}/${sub}`;
      const res = await gw.get(`${route}?format=ndjson`);
      expect(res.status, route).toBe(200);
      const paged = (await walk(gw, route, 200)).rows;
      expect(paged.length, route).toBeGreaterThan(0);
      expect(res.text.trim().split('\n').map((line) => JSON.parse(line)), route).toEqual(paged);
    }
    const current = await gw.get('/v1/current/characters?format=csv&select=name');
    expect(current.status).toBe(200);
    expect((parse(current.text) as string[][])[0]).toEqual(['id', 'name']);
  });
});
