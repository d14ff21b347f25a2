/**
 * History, over three loads A → B → C with KEEP_GENERATIONS=2 (C live, B kept, A dropped): the
 * bundle record lists every load newest first and tells kept from dropped; a bundle's detail
 * has its own manifest and catalog; `bundle=` pins a list, a group, a detail and a file to B
 * (its cursor keeps it), answers 410 for A naming the oldest kept bundle, 404 for a bundle never
 * loaded, 400 for a malformed id and on a stream. Expected values come from each bundle's files.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startServer } from '../../src/server.ts';
import { withNewRows } from '../../generator/new-rows.ts';
import { writeNextExport } from '../../generator/next-export.ts';
import { type BundleRow, readAllRows } from '../../generator/read-bundle.ts';
import { expectedCounts } from '../../harness/bundle-counts.ts';
import { expectError } from '../support/expect.ts';
import { bundleIdOf } from '../support/bundle-id.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';

let gw: TestGateway;
let work: string;
/** A, B, C: directory and bundle id (the SHA-256 of its manifest.json). */
const bundles: { dir: string; id: string }[] = [];

const json = async (dir: string, file: string) => JSON.parse(await readFile(path.join(dir, file), 'utf8'));

beforeAll(async () => {
  gw = await startTestGateway({ name: 'bundles', scale: 1, seed: 29, env: { KEEP_GENERATIONS: '2' } });
  work = await mkdtemp(path.join(tmpdir(), 'bundles-'));
  bundles.push({ dir: gw.bundleDir, id: await bundleIdOf(gw.bundleDir) });
  for (const tag of ['b', 'c']) {
    const dir = path.join(work, tag);
    await writeNextExport(bundles.at(-1)!.dir, dir, { killmails: withNewRows(tag), events: withNewRows(tag) });
    await gw.loadNext(dir);
    bundles.push({ dir, id: await bundleIdOf(dir) });
  }
}, 300_000);

afterAll(async () => {
  await gw?.close();
  await rm(work, { recursive: true, force: true });
});

/** Every page of a list: `first`, then `then` with each nextCursor. */
async function allPages(first: string, then = first.split('?')[0]!): Promise<{ rows: BundleRow[]; count: number }> {
  const rows: BundleRow[] = [];
  let res = await gw.get(first);
  expect(res.status, first).toBe(200);
  const count = res.body.meta.count;
  for (;;) {
    rows.push(...res.body.data);
    if (!res.body.nextCursor) return { rows, count };
    res = await gw.get(`${then}${then.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(res.body.nextCursor)}`);
    expect(res.status).toBe(200);
  }
}

describe('/v1/bundles', () => {
  it('lists every load newest first, live and kept ones marked, with their counts', async () => {
    const [a, b, c] = bundles;
    const { rows, count } = await allPages('/v1/bundles?limit=2');
    expect(count).toBe(3);
    expect(rows.map((r) => r.bundleId)).toEqual([c!.id, b!.id, a!.id]);
    expect(rows.map((r) => [r.live, r.queryable])).toEqual([[true, true], [false, true], [false, false]]);
    for (const [i, row] of rows.entries()) {
      const dir = [c, b, a][i]!.dir;
      const manifest = await json(dir, 'manifest.json');
      expect(Date.parse(row.generatedAt as string)).toBe(Date.parse(manifest.generatedAt));
      for (const [index, documents] of Object.entries(await expectedCounts(dir))) expect((row.counts as Record<string, number>)[index], `${index} of ${dir}`).toBe(documents);
    }
  });

  it('answers one bundle with its own manifest and catalog, and its ops documents while kept', async () => {
    const [a, b] = bundles;
    const kept = await gw.get(`/v1/bundles/${b!.id}`);
    expect(kept.status).toBe(200);
    expect(kept.body.data).toMatchObject({ bundleId: b!.id, live: false, queryable: true, manifest: await json(b!.dir, 'manifest.json'), catalog: await json(b!.dir, 'catalog.json') });
    expect(kept.body.data.ops.freshness).toEqual(await json(b!.dir, 'ops_freshness.json'));
    const dropped = await gw.get(`/v1/bundles/${a!.id}`);
    expect(dropped.body.data).toMatchObject({ bundleId: a!.id, queryable: false, manifest: await json(a!.dir, 'manifest.json'), ops: null });
    expectError(await gw.get(`/v1/bundles/${'0'.repeat(64)}`), 404, 'not_found');
    expectError(await gw.get('/v1/bundles/not!an!id'), 400, 'bad_request', 'bundleId');
  });
});

describe('bundle= on read routes', () => {
  const stillness = (rows: BundleRow[]) => rows.filter((r) => r.environment === 'stillness');

  it('pins a list to a kept bundle, and its cursor keeps it', async () => {
    const b = bundles[1]!;
    const expected = stillness(await readAllRows(b.dir, 'killmails.jsonl')).map((r) => r.id).sort();
    const live = stillness(await readAllRows(bundles[2]!.dir, 'killmails.jsonl'));
    expect(live.length).not.toBe(expected.length);
    const first = await gw.get(`/v1/killmails?cycles=all&limit=5&bundle=${b.id}`);
    expect(first.body.meta).toMatchObject({ count: expected.length, bundleId: b.id });
    expect(first.headers.get('registry-bundle-id')).toBe(b.id);
    // Later pages by their cursor, without bundle=.
    const { rows } = await allPages(`/v1/killmails?cycles=all&limit=5&bundle=${b.id}`, '/v1/killmails?cycles=all&limit=5');
    expect(rows.map((r) => r.id).sort()).toEqual(expected);
    // A cursor of B's with bundle=C: which bundle is meant cannot be told.
    expectError(await gw.get(`/v1/killmails?cycles=all&limit=5&cursor=${encodeURIComponent(first.body.nextCursor)}&bundle=${bundles[2]!.id}`), 400, 'bad_request', 'cursor');
  });

  it('pins a group, a detail and a file', async () => {
    const b = bundles[1]!;
    const rows = stillness(await readAllRows(b.dir, 'killmails.jsonl'));
    const grouped = await gw.get(`/v1/killmails?cycles=all&group_by=system&bundle=${b.id}`);
    expect(grouped.body.data.reduce((n: number, g: { count: number }) => n + g.count, 0)).toBe(rows.length);
    // A killmail new in C is not in B.
    const newInC = stillness(await readAllRows(bundles[2]!.dir, 'killmails.jsonl')).find((r) => !rows.some((s) => s.id === r.id))!;
    expect((await gw.get(`/v1/killmails/${encodeURIComponent(String(newInC.id))}`)).status).toBe(200);
    expect((await gw.get(`/v1/killmails/${encodeURIComponent(String(newInC.id))}?bundle=${b.id}`)).status).toBe(404);
    const file = await fetch(`${gw.url}/v1/bundles/${b.id}/exports/manifest.json`);
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer()).equals(await readFile(path.join(b.dir, 'manifest.json')))).toBe(true);
  });

  it('sends Elasticsearch what a read of the live bundle sends, and no lookup per page', async () => {
    // A gateway of its own, reaching Elasticsearch through a proxy that counts what it is sent.
    let sent = 0;
    const proxy = createServer((req, res) => {
      sent += 1;
      const forward = request(new URL(req.url!, inject('esUrl')), { method: req.method, headers: req.headers, agent: false }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      forward.on('error', () => res.destroy());
      req.pipe(forward);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const config = { ...gw.config, esUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, responseCacheBytes: undefined };
    const counted = await startServer(config, config.esUrl);
    try {
      const b = bundles[1]!;
      /** Elasticsearch requests for 20 pages of each kind, distinct pages (nothing answered from a cache). */
      const cost = async (pin: string) => {
        await fetch(`${counted.url}/v1/killmails?cycles=all&limit=1${pin}`).then((r) => r.arrayBuffer());
        sent = 0;
        for (let i = 2; i <= 21; i += 1) expect((await fetch(`${counted.url}/v1/killmails?cycles=all&limit=${i}${pin}`)).status).toBe(200);
        return sent;
      };
      const live = await cost('');
      const pinned = await cost(`&bundle=${b.id}`);
      // The lookups of the kept generations and of B's document are made once a second at most (as the live one's).
      expect(live).toBeGreaterThanOrEqual(20);
      expect(pinned).toBeLessThanOrEqual(live + 4);
    } finally {
      await counted.close();
      proxy.close();
    }
  });

  it('answers 410 for a bundle no longer kept naming the oldest kept, 404 for one never loaded, 400 for a bad id and on a stream', async () => {
    const [a, b] = bundles;
    const gone = await gw.get(`/v1/entities?bundle=${a!.id}`);
    expectError(gone, 410, 'gone');
    expect(gone.body.error.details).toEqual({ parameter: 'bundle', oldestKept: b!.id });
    expectError(await gw.get(`/v1/bundles/${a!.id}/exports/manifest.json`), 410, 'gone');
    expectError(await gw.get(`/v1/entities?bundle=${'f'.repeat(64)}`), 404, 'not_found', 'bundle');
    expectError(await gw.get('/v1/entities?bundle=a/b'), 400, 'bad_request', 'bundle');
    expectError(await gw.get(`/v1/killmails/stream?bundle=${b!.id}`), 400, 'bad_request', 'bundle');
  });
});
