/**
 * Elasticsearch going away under a running gateway and coming back (the gateway reaches the
 * run's cluster through a TCP forwarder that the test takes down and brings up on the same
 * port): exports and health keep being served from local disk, JSON routes answer 503
 * `unavailable`, the outage is logged once (not once per request) and its end once, and the
 * gateway answers again by itself as soon as the cluster does.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Manifest, readManifest } from '../../generator/read-bundle.ts';
import { LIVE_CACHE_MS } from '../../src/search/search-service.ts';
import { expectError } from '../support/expect.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { type LogCapture, captureLog } from '../support/log-capture.ts';
import { type TcpProxy, startTcpProxy } from '../support/tcp-proxy.ts';

let gw: TestGateway;
let proxy: TcpProxy;
let log: LogCapture;
let manifest: Manifest;

beforeAll(async () => {
  proxy = await startTcpProxy(inject('esUrl'));
  log = captureLog();
  gw = await startTestGateway({ name: 'outage', scale: 1, seed: 51, gatewayEsUrl: proxy.url, env: { LOG_LEVEL: 'info' }, logDestination: log.destination });
  manifest = await readManifest(gw.bundleDir);
}, 300_000);

afterAll(async () => {
  await gw?.close();
  await proxy?.close();
});

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const bytesOf = async (route: string, init?: RequestInit) => {
  const res = await fetch(`${gw.url}${route}`, init);
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
};
/** Longer than the gateway's one-second cache of the live generation: the next request asks ES. */
const pastLiveCache = () => new Promise((resolve) => setTimeout(resolve, LIVE_CACHE_MS + 100));

describe('Elasticsearch down, then back', () => {
  it('serves exports and health from disk, answers 503 elsewhere, logs the outage once and recovers', async () => {
    expect((await gw.get('/v1/entities?limit=5')).status).toBe(200);
    const plainFiles = manifest.files.filter((file) => !file.path.endsWith('.gz'));
    expect(plainFiles.length).toBeGreaterThan(0);

    await proxy.down();
    await pastLiveCache();
    const jsonRoutes = ['/v1/entities', '/v1/search?q=zeta', '/v1/killmails', '/v1/ops/freshness', '/v1/ready'];
    for (const route of jsonRoutes) expectError(await gw.get(route), 503, 'unavailable');

    // Every export, byte for byte and with its validators, while nothing answers on the ES port.
    const served = await bytesOf('/v1/exports/manifest.json');
    expect(served.status).toBe(200);
    expect(served.body.equals(await readFile(path.join(gw.bundleDir, 'manifest.json')))).toBe(true);
    for (const file of manifest.files) {
      // identity: gzip-only files are then decompressed by the gateway, and the ETag names those bytes.
      const res = await bytesOf(`/v1/exports/${file.path}`, { headers: { 'Accept-Encoding': 'identity' } });
      expect(res.status, file.path).toBe(200);
      expect(sha256(res.body), file.path).toBe(file.sha256);
      expect(res.headers.get('etag')).toBe(`"${file.sha256}"`);
    }
    const [first] = manifest.files;
    expect((await bytesOf(`/v1/exports/${first!.path}`, { headers: { 'If-None-Match': `"${first!.sha256}"` } })).status).toBe(304);
    const range = await bytesOf(`/v1/exports/${plainFiles[0]!.path}`, { headers: { Range: 'bytes=0-9' } });
    expect(range.status).toBe(206);
    expect(range.body.equals((await readFile(path.join(gw.bundleDir, plainFiles[0]!.path))).subarray(0, 10))).toBe(true);
    expectError(await gw.get('/v1/exports/no-such-file.json'), 404, 'not_found');
    expect((await gw.get('/v1/health')).status).toBe(200);

    // Each of those requests but health tried ES once and failed: one warning for all of them.
    const failed = jsonRoutes.length + 1 + manifest.files.length + 3;
    expect(log.find('elasticsearch request failed')).toHaveLength(1);
    expect(log.find('elasticsearch answers again')).toHaveLength(0);

    await proxy.up();
    let status = 0;
    for (let attempt = 0; attempt < 50 && status !== 200; attempt += 1) {
      status = (await gw.get('/v1/entities?limit=5')).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(status).toBe(200);
    const recovered = log.find('elasticsearch answers again');
    expect(recovered).toHaveLength(1);
    expect(recovered[0]!.failures).toBeGreaterThanOrEqual(failed);
    expect(log.find('elasticsearch request failed')).toHaveLength(1);
  });
});
