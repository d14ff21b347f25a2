/**
 * `/v1/exports/{file}`: every file of the manifest comes back byte for byte (checked against
 * the manifest's sha256), gzip-only files by negotiation, with ETag, 304, ranges and HEAD.
 * Raw HTTP (node:http) so that no client decompresses behind the test's back.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, readdir, readlink } from 'node:fs/promises';
import { request } from 'node:http';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Manifest, readManifest } from '../../generator/read-bundle.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { type Raw, rawRequest } from '../support/raw-http.ts';

let gw: TestGateway;
let manifest: Manifest;

function raw(route: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
  return rawRequest(`${gw.url}${route}`, headers, method);
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const gzOnly = () => manifest.files.filter((f) => !existsSync(path.join(gw.bundleDir, f.path)));

/** This process's open descriptors on files of the gateway's data folder (the gateway runs in it). */
async function openDataFiles(): Promise<string[]> {
  const links = await Promise.all((await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
  return links.filter((link) => link.startsWith(gw.config.dataDir));
}

/** GETs a path, and leaves (destroys the connection) as soon as the first bytes of the body arrive. */
function leaveAfterFirstBytes(route: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${gw.url}${route}`, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve(res.statusCode!);
      });
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  gw = await startTestGateway({ name: 'exports', scale: 1, seed: 11 });
  manifest = await readManifest(gw.bundleDir);
}, 300_000);

afterAll(() => gw?.close());

describe('/v1/exports', () => {
  it('serves every file of the manifest with the bytes its sha256 names', async () => {
    expect(gzOnly().length).toBeGreaterThan(0);
    for (const file of manifest.files) {
      const res = await raw(`/v1/exports/${file.path}`);
      expect(res.status, file.path).toBe(200);
      expect(sha256(res.body), file.path).toBe(file.sha256);
      expect(Number(res.headers['content-length'])).toBe(file.sizeBytes);
      expect(res.headers.etag).toBe(`"${file.sha256}"`);
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.headers['last-modified']).toBe(new Date(manifest.generatedAt).toUTCString());
    }
    const own = await raw('/v1/exports/manifest.json');
    expect(own.body.equals(await readFile(path.join(gw.bundleDir, 'manifest.json')))).toBe(true);
    expect(own.headers.etag).toBe(`"${sha256(own.body)}"`);
  });

  it('serves a gzip-only file gzipped to clients that accept gzip, and as its twin', async () => {
    const file = gzOnly()[0]!;
    const stored = await readFile(path.join(gw.bundleDir, `${file.path}.gz`));
    const encoded = await raw(`/v1/exports/${file.path}`, { 'Accept-Encoding': 'gzip, deflate' });
    expect(encoded.headers['content-encoding']).toBe('gzip');
    expect(encoded.headers.vary).toMatch(/Accept-Encoding/);
    expect(encoded.body.equals(stored)).toBe(true);
    expect(sha256(gunzipSync(encoded.body))).toBe(file.sha256);
    const twin = await raw(`/v1/exports/${file.path}.gz`);
    expect(twin.headers['content-type']).toBe('application/gzip');
    expect(twin.body.equals(stored)).toBe(true);
    const plainStored = manifest.files.find((f) => f.path.endsWith('.jsonl') && !gzOnly().includes(f))!;
    const noTwin = await raw(`/v1/exports/${plainStored.path}.gz`);
    expect(noTwin.status).toBe(404);
    expect(JSON.parse(noTwin.body.toString()).error.message).toBe('Export object not found.');
  });

  it('sends a gzip-encoded file whole even when a range is asked (a slice of gzip cannot be decoded); its twin has ranges', async () => {
    const file = gzOnly()[0]!;
    const stored = await readFile(path.join(gw.bundleDir, `${file.path}.gz`));
    const encoded = await raw(`/v1/exports/${file.path}`, { 'Accept-Encoding': 'gzip', Range: 'bytes=10-99' });
    expect(encoded.status).toBe(200);
    expect(encoded.headers['content-encoding']).toBe('gzip');
    expect(encoded.headers['accept-ranges']).toBeUndefined();
    expect(sha256(gunzipSync(encoded.body))).toBe(file.sha256);
    // A client that decodes as it reads (fetch) gets the whole file.
    const fetched = await fetch(`${gw.url}/v1/exports/${file.path}`, { headers: { Range: 'bytes=10-99' } });
    expect(fetched.status).toBe(200);
    expect(sha256(Buffer.from(await fetched.arrayBuffer()))).toBe(file.sha256);
    const twin = await raw(`/v1/exports/${file.path}.gz`, { Range: 'bytes=10-99' });
    expect(twin.status).toBe(206);
    expect(twin.body.equals(stored.subarray(10, 100))).toBe(true);
  });

  it('closes the stored file when a client leaves in the middle of a file it is sent decompressed', async () => {
    // The largest of them: its decompressed bytes outrun the socket's buffers, so the file is
    // still being read when the client leaves (the body was piped, and the file kept open).
    const file = gzOnly().sort((a, b) => b.sizeBytes - a.sizeBytes)[0]!;
    expect(file.sizeBytes).toBeGreaterThan(1024 * 1024);
    expect(await openDataFiles()).toEqual([]);
    for (let i = 0; i < 5; i += 1) expect(await leaveAfterFirstBytes(`/v1/exports/${file.path}`)).toBe(200);
    await vi.waitFor(async () => expect(await openDataFiles()).toEqual([]), { timeout: 5_000, interval: 100 });
    // And the route still serves it whole.
    expect(sha256((await raw(`/v1/exports/${file.path}`)).body)).toBe(file.sha256);
  });

  it('answers 304 to a matching If-None-Match or an unchanged If-Modified-Since', async () => {
    const file = manifest.files[0]!;
    const first = await raw(`/v1/exports/${file.path}`);
    expect((await raw(`/v1/exports/${file.path}`, { 'If-None-Match': first.headers.etag! })).status).toBe(304);
    expect((await raw(`/v1/exports/${file.path}`, { 'If-Modified-Since': first.headers['last-modified']! })).status).toBe(304);
    expect((await raw(`/v1/exports/${file.path}`, { 'If-None-Match': '"other"' })).status).toBe(200);
    // fetch() adds `Cache-Control: no-cache` to conditional requests; the origin still answers 304.
    expect((await fetch(`${gw.url}/v1/exports/${file.path}`, { headers: { 'If-None-Match': first.headers.etag! } })).status).toBe(304);
  });

  it('serves byte ranges (206) and refuses ranges past the end (416)', async () => {
    const file = manifest.files.find((f) => f.path.endsWith('.jsonl') && !gzOnly().includes(f))!;
    const whole = (await raw(`/v1/exports/${file.path}`)).body;
    const part = await raw(`/v1/exports/${file.path}`, { Range: 'bytes=10-99' });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 10-99/${whole.length}`);
    expect(part.body.equals(whole.subarray(10, 100))).toBe(true);
    const tail = await raw(`/v1/exports/${file.path}`, { Range: 'bytes=-50' });
    expect(tail.body.equals(whole.subarray(whole.length - 50))).toBe(true);
    const stale = await raw(`/v1/exports/${file.path}`, { Range: 'bytes=0-9', 'If-Range': '"other"' });
    expect(stale.status).toBe(200);
    const outside = await raw(`/v1/exports/${file.path}`, { Range: `bytes=${whole.length}-` });
    expect(outside.status).toBe(416);
    expect(outside.headers['content-range']).toBe(`bytes */${whole.length}`);
  });

  it('answers HEAD with the GET headers and no body', async () => {
    const file = manifest.files[1]!;
    const head = await raw(`/v1/exports/${file.path}`, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(Number(head.headers['content-length'])).toBe(file.sizeBytes);
    expect(head.headers.etag).toBe(`"${file.sha256}"`);
  });

  it('answers the reference names as aliases and 404 to anything else', async () => {
    const chain = manifest.files.find((f) => f.path === 'chain_objects.jsonl');
    if (chain) expect(sha256((await raw('/v1/exports/sui_objects.jsonl')).body)).toBe(chain.sha256);
    expect((await raw('/v1/exports/ops_sui_coverage.json')).body.equals((await raw('/v1/exports/ops_chain_coverage.json')).body)).toBe(true);
    for (const name of ['nope.json', '..%2Fmanifest.json', '..%2F..%2Fpackage.json', 'entities.json', '%2Fetc%2Fpasswd', 'types.jsonl']) {
      const res = await raw(`/v1/exports/${name}`);
      expect(res.status, name).toBe(404);
      expect(JSON.parse(res.body.toString()).error.code).toBe('not_found');
    }
  });
});
