/**
 * `/v1/exports/{file}` of a generation loaded from an object store: the files are streamed from
 * the store through the gateway — by the gateway that loaded it and by a second one with no data
 * directory at all — byte for byte (whole, a range, 304, a gzip-only file decoded or sent as
 * stored). From a fault-injecting http store: a connection cut mid-download is resumed unseen
 * by the client, and an object replaced since the load is a 404, never its new bytes.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { publishBundle } from '../../generator/publish.ts';
import { type Manifest, readManifest } from '../../generator/read-bundle.ts';
import { writeBundle } from '../../generator/write-bundle.ts';
import { loadConfig } from '../../src/config.ts';
import { type RunningServer, startServer } from '../../src/server.ts';
import { createObjectStore } from '../../src/store/object-store.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { type MotoServer, startMoto } from '../../harness/moto.ts';
import { rawRequest } from '../support/raw-http.ts';
import { type StaticServer, startStaticServer } from '../support/static-server.ts';

const BUCKET = 'gateway-exports';
let moto: MotoServer;
let gw: TestGateway;
let second: RunningServer;
let work: string;
let manifest: Manifest;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const gzOnly = (dir: string, m: Manifest) => m.files.filter((f) => !existsSync(path.join(dir, f.path)));

beforeAll(async () => {
  moto = await startMoto();
  await moto.createBucket(BUCKET);
  work = await mkdtemp(path.join(tmpdir(), 'store-exports-'));
  gw = await startTestGateway({
    name: 'storeexports',
    scale: 1,
    seed: 51,
    env: moto.env,
    store: moto.store(),
    publish: async (dir) => {
      await publishBundle(dir, `s3://${BUCKET}/registry`, { store: moto.store() });
      return `s3://${BUCKET}/registry`;
    },
  });
  manifest = await readManifest(gw.bundleDir);
  // Another gateway process's view: the same prefix and store, and a data directory that does not exist.
  const config = loadConfig({ ...moto.env, INDEX_PREFIX: gw.prefix, DATA_DIR: path.join(work, 'no-such-dir'), PORT: '0', LOG_LEVEL: 'silent', RATE_LIMIT: 'off' });
  second = await startServer(config, inject('esUrl'));
}, 300_000);

afterAll(async () => {
  await second?.close();
  await gw?.close();
  await moto?.stop();
  await rm(work, { recursive: true, force: true });
});

describe('a generation loaded from s3://', () => {
  it('keeps no local copy: its files are in the store (only the loader\'s line indices are kept locally)', () => {
    expect(gw.load.status).toBe('loaded');
    expect(readdirSync(path.join(gw.config.dataDir, gw.prefix))).toEqual(['line-index']);
    expect(existsSync(path.join(work, 'no-such-dir'))).toBe(false);
  });

  it('serves every file with the bytes its sha256 names, from both gateways', async () => {
    for (const base of [gw.url, second.url]) {
      for (const file of manifest.files) {
        const res = await rawRequest(`${base}/v1/exports/${file.path}`);
        expect(res.status, file.path).toBe(200);
        expect(sha256(res.body), file.path).toBe(file.sha256);
        expect(Number(res.headers['content-length'])).toBe(file.sizeBytes);
        expect(res.headers.etag).toBe(`"${file.sha256}"`);
        expect(res.headers['content-encoding']).toBeUndefined();
      }
      const own = await rawRequest(`${base}/v1/exports/manifest.json`);
      expect(own.body.equals(await readFile(path.join(gw.bundleDir, 'manifest.json')))).toBe(true);
    }
  });

  it('serves byte ranges of a plain file and of a .gz twin, and 304 on If-None-Match', async () => {
    const plain = manifest.files.find((f) => f.path.endsWith('.jsonl') && !gzOnly(gw.bundleDir, manifest).includes(f))!;
    const whole = await readFile(path.join(gw.bundleDir, plain.path));
    const part = await rawRequest(`${second.url}/v1/exports/${plain.path}`, { Range: 'bytes=10-99' });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 10-99/${whole.length}`);
    expect(part.body.equals(whole.subarray(10, 100))).toBe(true);
    const gz = gzOnly(gw.bundleDir, manifest)[0]!;
    const stored = await readFile(path.join(gw.bundleDir, `${gz.path}.gz`));
    const twin = await rawRequest(`${second.url}/v1/exports/${gz.path}.gz`, { Range: 'bytes=-50' });
    expect(twin.status).toBe(206);
    expect(twin.body.equals(stored.subarray(stored.length - 50))).toBe(true);
    const cached = await rawRequest(`${second.url}/v1/exports/${plain.path}`, { 'If-None-Match': `"${plain.sha256}"` });
    expect(cached.status).toBe(304);
    expect(cached.body.length).toBe(0);
  });

  it('decodes a gzip-only file for a client without gzip, and sends it as stored to one with', async () => {
    const file = gzOnly(gw.bundleDir, manifest)[0]!;
    const stored = await readFile(path.join(gw.bundleDir, `${file.path}.gz`));
    const decoded = await rawRequest(`${second.url}/v1/exports/${file.path}`);
    expect(decoded.headers['content-encoding']).toBeUndefined();
    expect(sha256(decoded.body)).toBe(file.sha256);
    const encoded = await rawRequest(`${second.url}/v1/exports/${file.path}`, { 'Accept-Encoding': 'gzip' });
    expect(encoded.headers['content-encoding']).toBe('gzip');
    expect(encoded.body.equals(stored)).toBe(true);
    expect(sha256(gunzipSync(encoded.body))).toBe(file.sha256);
  });
});

describe('a generation loaded from http://, the store misbehaving after the load', () => {
  let site: string;
  let server: StaticServer;
  let bundleDir: string;
  let reloaded: Manifest;

  beforeAll(async () => {
    bundleDir = path.join(work, 'bundle');
    await writeBundle(bundleDir, { scale: 1, seed: 52 });
    site = path.join(work, 'site');
    await publishBundle(bundleDir, path.join(site, 'registry'));
    server = await startStaticServer(site);
    // Both gateways cache the live generation for the same second, which loadNext waits out.
    await gw.loadNext(`${server.url}/registry`, { store: createObjectStore() });
    reloaded = await readManifest(bundleDir);
  });

  afterAll(() => server?.close());

  it('resumes a download cut mid-file with a Range request the client never sees', async () => {
    const plain = reloaded.files.find((f) => f.path === 'killmails.jsonl')!;
    const gz = gzOnly(bundleDir, reloaded)[0]!;
    server.inject('/killmails.jsonl', { kind: 'drop' });
    server.inject(`/${gz.path}.gz`, { kind: 'drop' });
    const whole = await rawRequest(`${second.url}/v1/exports/${plain.path}`);
    expect(whole.status).toBe(200);
    expect(sha256(whole.body)).toBe(plain.sha256);
    const decoded = await rawRequest(`${second.url}/v1/exports/${gz.path}`);
    expect(sha256(decoded.body)).toBe(gz.sha256);
    const resumed = server.requests.filter((r) => r.status === 206).map((r) => path.basename(r.path));
    expect(resumed).toEqual(['killmails.jsonl', `${gz.path}.gz`]);
  });

  it('answers 404 for an object replaced since the load, never its new bytes', async () => {
    const file = reloaded.files.find((f) => f.path === 'sources.jsonl')!;
    const stored = path.join(site, 'registry', 'bundles', sha256(await readFile(path.join(bundleDir, 'manifest.json'))), file.path);
    await utimes(stored, new Date(), new Date('2030-01-01T00:00:00Z'));
    const res = await rawRequest(`${second.url}/v1/exports/${file.path}`);
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body.toString()).error.message).toBe('Export object not found.');
  });
});
