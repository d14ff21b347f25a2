/**
 * The response cache and single flight against a real Elasticsearch, counting what reaches it
 * with Elasticsearch's own search counters (`_stats/search` of the index read): a repeat costs
 * no search; 256 identical cold requests cost one; an error shared by a burst is not kept; a
 * swap answers the new generation's data at once; select, environment and encoding variants
 * never share an entry; a hit answers 304 to its ETag; the byte bound holds under thousands of
 * distinct URLs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { Client } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { BundleRow } from '../../generator/read-bundle.ts';
import { writeNextExport } from '../../generator/next-export.ts';
import { aliasName } from '../../src/indices/generation.ts';
import { testClient } from '../support/elasticsearch.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { type TcpProxy, startTcpProxy } from '../support/tcp-proxy.ts';

let gw: TestGateway;
let proxy: TcpProxy;
let client: Client;
let work: string;

/** Searches Elasticsearch has run on the live index of `name` (its own counter). */
async function searches(name: string): Promise<number> {
  const stats = await client.indices.stats({ index: aliasName(gw.prefix, name), metric: 'search' });
  return stats._all.primaries!.search!.query_total!;
}

/** The bytes as sent (fetch would decode them). */
function raw(url: string, headers: Record<string, string>): Promise<{ headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

async function metric(name: string): Promise<number> {
  const text = (await gw.get('/metrics')).text;
  return Number(new RegExp(`^${gw.config.metricsPrefix}_${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
}

beforeAll(async () => {
  proxy = await startTcpProxy(inject('esUrl'));
  // A small cache, so thousands of distinct URLs overflow it.
  gw = await startTestGateway({ name: 'response-cache', scale: 2, seed: 91, gatewayEsUrl: proxy.url, env: { RESPONSE_CACHE: '1' } });
  client = testClient();
  work = await mkdtemp(path.join(tmpdir(), 'response-cache-'));
}, 300_000);

afterAll(async () => {
  await gw?.close();
  await proxy?.close();
  await client?.close();
  await rm(work, { recursive: true, force: true });
});

describe('the response cache', () => {
  it('answers a repeated read from memory: no search, the same bytes, a hit on /metrics', async () => {
    const first = await gw.get('/v1/killmails?limit=20&cycles=all');
    // A scrape counts rows (Elasticsearch searches) on its first call: before the search count.
    const hits = await metric('response_cache_hits_total');
    const before = await searches('killmails');
    for (let i = 0; i < 5; i++) {
      const again = await gw.get('/v1/killmails?limit=20&cycles=all');
      expect(again.status).toBe(200);
      expect(again.text).toBe(first.text);
    }
    expect(await searches('killmails')).toBe(before);
    expect(await metric('response_cache_hits_total')).toBe(hits + 5);
  });

  it('keeps select, environment and encoding variants apart, and encodes each as asked', async () => {
    const plain = await gw.get('/v1/killmails?limit=30&cycles=all', { headers: { 'accept-encoding': 'identity' } });
    const selected = await gw.get('/v1/killmails?limit=30&cycles=all&select=occurredAt');
    const elsewhere = await gw.get('/v1/killmails?limit=30&cycles=all&environment=utopia');
    expect(new Set([plain.text, selected.text, elsewhere.text]).size).toBe(3);
    for (const [encoding, decode] of [['gzip', gunzipSync], ['br', brotliDecompressSync]] as const) {
      for (let i = 0; i < 2; i++) {
        // Twice: a miss, then a hit, each decoding to the identity answer.
        const answer = await raw(`${gw.url}/v1/killmails?limit=30&cycles=all`, { 'accept-encoding': encoding });
        expect(answer.headers['content-encoding']).toBe(encoding);
        expect(decode(answer.body).toString('utf8')).toBe(plain.text);
      }
    }
    // Each spelling of Accept-Encoding is negotiated on its own (weights included), hit or miss.
    for (const [accepted, expected] of [['br;q=0.5, gzip', 'gzip'], ['gzip;q=0, br;q=0, identity', undefined], ['br;q=0.5, gzip', 'gzip']] as const) {
      const answer = await raw(`${gw.url}/v1/killmails?limit=30&cycles=all`, { 'accept-encoding': accepted });
      expect(answer.headers['content-encoding']).toBe(expected);
      expect((expected === 'gzip' ? gunzipSync(answer.body) : answer.body).toString('utf8')).toBe(plain.text);
    }
  });

  it('answers a repeat before routing as the route would: labelled by its route, HEAD without a body, other URLs still validated', async () => {
    const url = '/v1/killmails?limit=7&cycles=all';
    const first = await gw.get(url);
    const count = async () => {
      const lines = (await gw.get('/metrics')).text.split('\n').filter((l) => l.startsWith(`${gw.config.metricsPrefix}_http_request_duration_seconds_count{`));
      const line = lines.find((l) => ['route="/v1/killmails"', 'method="GET"', 'status="200"'].every((label) => l.includes(label)));
      return Number(line?.split(' ').at(-1) ?? NaN);
    };
    const before = await count();
    const hits = await metric('response_cache_hits_total');
    for (let i = 0; i < 3; i++) expect((await gw.get(url)).text).toBe(first.text);
    expect(await count()).toBe(before + 3);
    expect(await metric('response_cache_hits_total')).toBe(hits + 3);
    // HEAD of an answer kept in that encoding: its headers, no body.
    await gw.get(url, { headers: { 'accept-encoding': 'identity' } });
    const head = await fetch(`${gw.url}${url}`, { method: 'HEAD', headers: { 'accept-encoding': 'identity' } });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(first.text)));
    expect(await head.text()).toBe('');
    // The same route with a parameter it refuses is still routed and validated.
    const refused = await gw.get('/v1/killmails?limit=0&cycles=all');
    expect(refused.status).toBe(400);
  });

  it('answers 304 from a hit to the ETag of the answer', async () => {
    const first = await gw.get('/v1/events?limit=5');
    const etag = first.headers.get('etag')!;
    const second = await gw.get('/v1/events?limit=5', { headers: { 'if-none-match': etag } });
    expect(second.status).toBe(304);
    expect(second.headers.get('etag')).toBe(etag);
  });

  it('never keeps an error: every 404 asks Elasticsearch again', async () => {
    await gw.get('/v1/entities/character:nowhere:1');
    const before = await searches('entities');
    for (let i = 0; i < 3; i++) expect((await gw.get('/v1/entities/character:nowhere:1')).status).toBe(404);
    expect(await searches('entities')).toBe(before + 3);
  });

  it('holds to its byte bound under thousands of distinct URLs', async () => {
    const url = (n: number) => `/v1/events?cycles=all&limit=${1 + (n % 200)}&since=2026-01-01T00:00:${String(Math.floor(n / 200)).padStart(2, '0')}Z`;
    for (let i = 0; i < 3000; i += 50) await Promise.all(Array.from({ length: 50 }, (_, k) => gw.get(url(i + k))));
    expect(await metric('response_cache_bytes')).toBeLessThanOrEqual(1024 * 1024);
    expect(await metric('response_cache_evictions_total')).toBeGreaterThan(0);
  });
});

describe('single flight', () => {
  it('sends one search for 256 identical cold requests', async () => {
    const before = await searches('events');
    const answers = await Promise.all(Array.from({ length: 256 }, () => gw.get('/v1/events?limit=13&kind=character.created')));
    expect(answers.every((a) => a.status === 200 && a.text === answers[0]!.text)).toBe(true);
    expect(await searches('events')).toBe(before + 1);
  });

  it('shares an error with the requests that waited, and does not keep it', async () => {
    await gw.get('/v1/ready');
    proxy.hold();
    const burst = Array.from({ length: 20 }, () => gw.get('/v1/events?limit=17&cycles=all'));
    await proxy.holding();
    await proxy.down();
    const answers = await Promise.all(burst);
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(503));
    await proxy.up();
    proxy.release();
    const before = await searches('events');
    expect((await gw.get('/v1/events?limit=17&cycles=all')).status).toBe(200);
    expect(await searches('events')).toBe(before + 1);
  });
});

describe('a generation swap', () => {
  it('answers the new generation at once', async () => {
    const before = await gw.get('/v1/killmails?cycles=all&limit=1');
    const next = path.join(work, 'next');
    const drop = async function* (rows: AsyncIterable<BundleRow>) {
      let first = true;
      for await (const row of rows) {
        if (!first) yield row;
        first = false;
      }
    };
    await writeNextExport(gw.bundleDir, next, { killmails: drop });
    await gw.loadNext(next);
    const after = await gw.get('/v1/killmails?cycles=all&limit=1');
    expect(after.body.meta.count).toBe(before.body.meta.count - 1);
    expect(after.body.data[0].id).not.toBe(before.body.data[0].id);
  });
});
