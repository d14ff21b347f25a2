/**
 * Every answer says what it was computed from: `meta.bundleId` and `meta.bundleGeneratedAt` on
 * JSON answers read from a generation (details, raw list pages, groups, battles, the root,
 * readiness, an answer repeated from the response cache), the `Registry-Bundle-Id` and
 * `Registry-Bundle-Generated-At` headers on those and on CSV, NDJSON, files and event streams,
 * and a stream that crosses a swap says so in an event of its own (`event: bundle`, no id)
 * before the next bundle's rows. Expected ids are the manifests' own: the SHA-256 of each
 * bundle's `manifest.json` and its `generatedAt`.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withNewRows } from '../../generator/new-rows.ts';
import { writeNextExport } from '../../generator/next-export.ts';
import { readAllRows } from '../../generator/read-bundle.ts';
import { openSse } from '../../harness/sse.ts';
import { bundleIdOf } from '../support/bundle-id.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';

let gw: TestGateway;
let work: string;

/** What a bundle directory's answers must name: its manifest's hash and `generatedAt`. */
async function stampOf(dir: string): Promise<{ bundleId: string; bundleGeneratedAt: string }> {
  const manifest = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8'));
  return { bundleId: await bundleIdOf(dir), bundleGeneratedAt: nanos(manifest.generatedAt) };
}

/** An RFC 3339 UTC instant as the API writes every instant: nine fractional digits. */
const nanos = (instant: string) => instant.replace(/(?:\.(\d+))?Z$/, (_, fraction = '') => `.${fraction.padEnd(9, '0')}Z`);

const headersOf = (headers: Headers) => ({ bundleId: headers.get('registry-bundle-id'), bundleGeneratedAt: headers.get('registry-bundle-generated-at') });

beforeAll(async () => {
  gw = await startTestGateway({ name: 'bundle-stamp', scale: 1, seed: 23 });
  work = await mkdtemp(path.join(tmpdir(), 'bundle-stamp-'));
}, 300_000);

afterAll(async () => {
  await gw?.close();
  await rm(work, { recursive: true, force: true });
});

describe('what an answer was computed from', () => {
  it('names the bundle in meta and headers on every JSON answer read from a generation', async () => {
    const expected = await stampOf(gw.bundleDir);
    const entity = (await readAllRows(gw.bundleDir, 'entities.jsonl'))[0]!;
    const paths = ['/v1', '/v1/ready', '/v1/entities?limit=3', `/v1/entities/${encodeURIComponent(String(entity.id))}`, '/v1/killmails?cycles=all&group_by=killer', '/v1/battles?cycles=all&limit=2', '/v1/events?cycles=all&limit=2&select=id'];
    for (const p of paths) {
      // Twice: the second may come from the response cache.
      for (const round of [1, 2]) {
        const { status, body, headers } = await gw.get(p);
        expect(status, `${p} (${round})`).toBe(200);
        expect({ bundleId: body.meta.bundleId, bundleGeneratedAt: body.meta.bundleGeneratedAt }, `${p} (${round})`).toEqual(expected);
        expect(headersOf(headers), `${p} (${round})`).toEqual(expected);
        expect(body.meta.apiVersion).toBe('v1');
      }
    }
  });

  it('names it in headers on CSV, NDJSON and files, and not on what read no generation', async () => {
    const expected = await stampOf(gw.bundleDir);
    for (const p of ['/v1/events?cycles=all&format=csv', '/v1/killmails?cycles=all&format=ndjson', '/v1/exports/manifest.json']) {
      const { status, headers } = await gw.get(p);
      expect(status, p).toBe(200);
      expect(headersOf(headers), p).toEqual(expected);
    }
    const health = await gw.get('/v1/health');
    expect(health.body.meta.bundleId).toBeUndefined();
    expect(health.headers.get('registry-bundle-id')).toBeNull();
  });

  it('a stream names its bundle in its headers, then each new one in an event of its own before its rows', async () => {
    const first = await stampOf(gw.bundleDir);
    const stream = await openSse(`${gw.url}/v1/killmails/stream?cycles=all`);
    try {
      expect(headersOf(stream.headers)).toEqual(first);
      await stream.until((s) => s.comments.includes('live'), 'live comment');
      const next = path.join(work, 'next');
      await writeNextExport(gw.bundleDir, next, { killmails: withNewRows('next') });
      await gw.loadNext(next);
      const second = await stampOf(next);
      const old = new Set((await readAllRows(gw.bundleDir, 'killmails.jsonl')).map((r) => r.id));
      const added = (await readAllRows(next, 'killmails.jsonl')).filter((r) => r.environment === 'stillness' && !old.has(r.id));
      expect(added.length).toBeGreaterThan(0);
      await stream.until((s) => s.rows().length >= added.length, `${added.length} rows`);
      const named = stream.events.filter((e) => e.event !== undefined);
      expect(named).toEqual([{ event: 'bundle', data: JSON.stringify(second) }]);
      // Before the first row of the new bundle, and not a resume point.
      const at = stream.events.indexOf(named[0]!);
      expect(stream.events.findIndex((e) => e.data !== undefined && e.event === undefined)).toBeGreaterThan(at);
      expect(stream.rows().map((r) => r.id).sort()).toEqual(added.map((r) => r.id).sort());
      expect((await gw.get('/v1/killmails?limit=1')).body.meta.bundleId).toBe(second.bundleId);
    } finally {
      stream.close();
    }
  }, 180_000);
});
