/**
 * The object store client (src/store) against a real HTTP server with faults injected: a body
 * cut mid-file is resumed with a Range request (or read again from the start where the server
 * has no ranges) and comes out byte for byte; 503s are retried, honouring Retry-After; a stalled
 * body is a fault; an object replaced between the cut and the resume is refused, never spliced;
 * a refusal is one line naming the URL and the status, asked once; an abort stops a read at once.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/store/errors.ts';
import { type ObjectStoreOptions, type RetryEvent, createObjectStore } from '../../src/store/object-store.ts';
import { type StaticServer, startStaticServer } from '../support/static-server.ts';

let work: string;
let content: Buffer;
let servers: StaticServer[] = [];

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'object-store-'));
  content = randomBytes(3 * 1024 * 1024 + 17);
  await writeFile(path.join(work, 'big.bin'), content);
  await writeFile(path.join(work, 'small.json'), '{"a":1}\n');
});

afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

afterAll(() => rm(work, { recursive: true, force: true }));

async function serve(options: { ranges?: boolean } = {}): Promise<StaticServer> {
  const server = await startStaticServer(work, options);
  servers.push(server);
  return server;
}

function client(events: RetryEvent[] = [], options: ObjectStoreOptions = {}, timeoutMs = 5_000) {
  return createObjectStore({ timeoutMs, attempts: 4 }, { backoff: { baseMs: 10, maxMs: 2_000 }, onRetry: (e) => events.push(e), ...options });
}

async function readAll(body: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe('reading through faults', () => {
  it('resumes a body cut mid-file with Range and If-Match, and gives every byte once', async () => {
    const server = await serve();
    server.inject('/big.bin', { kind: 'drop' });
    const events: RetryEvent[] = [];
    const bytes = await readAll(await client(events).open(`${server.url}/big.bin`));
    expect(bytes.equals(content)).toBe(true);
    const gets = server.requests.filter((r) => r.method === 'GET');
    expect(gets).toHaveLength(2);
    expect(gets[1]!.range).toMatch(/^bytes=\d+-$/);
    expect(Number(/\d+/.exec(gets[1]!.range!)![0])).toBeGreaterThan(0);
    expect(gets[1]!.ifMatch).toMatch(/^"/);
    expect(gets[1]!.status).toBe(206);
    expect(events).toHaveLength(1);
    expect(events[0]!.offset).toBeGreaterThan(0);
  });

  it('reads again from the start, skipping what it gave, where the server has no ranges', async () => {
    const server = await serve({ ranges: false });
    server.inject('/big.bin', { kind: 'drop' });
    const bytes = await readAll(await client().open(`${server.url}/big.bin`));
    expect(bytes.equals(content)).toBe(true);
    expect(server.requests.map((r) => r.status)).toEqual([200, 200]);
  });

  it('reads a byte range, and resumes inside it', async () => {
    const server = await serve();
    server.inject('/big.bin', { kind: 'drop' });
    const bytes = await readAll(await client().open(`${server.url}/big.bin`, { start: 1000, end: 2_000_999 }));
    expect(bytes.equals(content.subarray(1000, 2_001_000))).toBe(true);
    expect(server.requests.map((r) => r.range)).toEqual(['bytes=1000-2000999', expect.stringMatching(/^bytes=\d+-2000999$/)]);
  });

  it('retries 503s, waiting as long as Retry-After says', async () => {
    const server = await serve();
    server.inject('/big.bin', { kind: 'status', status: 503, retryAfter: '1', times: 2 });
    const events: RetryEvent[] = [];
    const bytes = await readAll(await client(events).open(`${server.url}/big.bin`));
    expect(bytes.equals(content)).toBe(true);
    expect(server.requests.map((r) => r.status)).toEqual([503, 503, 200]);
    expect(events.map((e) => e.delayMs)).toEqual([1000, 1000]);
    expect(events[0]!.reason).toMatch(/^503/);
  });

  it('takes a body that stalls for a fault, and resumes it', async () => {
    const server = await serve();
    server.inject('/big.bin', { kind: 'stall' });
    const events: RetryEvent[] = [];
    const bytes = await readAll(await client(events, {}, 300).open(`${server.url}/big.bin`));
    expect(bytes.equals(content)).toBe(true);
    expect(events[0]!.reason).toMatch(/no byte of the body for 300 ms/);
    expect(server.requests[1]!.status).toBe(206);
  });

  it('refuses an object replaced between the cut and the resume (412), never splicing two versions', async () => {
    const server = await serve();
    const file = path.join(work, 'changing.bin');
    writeFileSync(file, content);
    server.inject('/changing.bin', { kind: 'drop', then: () => writeFileSync(file, Buffer.concat([content, Buffer.from('more')])) });
    const body = await client().open(`${server.url}/changing.bin`);
    const error = await readAll(body).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toMatch(/^GET http:\/\/127\.0\.0\.1:\d+\/changing\.bin: 412 Precondition Failed: the object changed since it was first read$/);
  });
});

describe('refusals and answers', () => {
  it('answers a 404 or 403 with one line naming the URL and the status, asked once', async () => {
    const server = await serve();
    server.inject('/small.json', { kind: 'status', status: 403 });
    const store = client();
    await expect(store.open(`${server.url}/small.json`)).rejects.toThrow(/^GET http:\/\/127\.0\.0\.1:\d+\/small\.json: 403 Forbidden$/);
    await expect(store.open(`${server.url}/nope.bin`)).rejects.toThrow(/^GET http:\/\/127\.0\.0\.1:\d+\/nope\.bin: 404 Not Found$/);
    expect(server.requests).toHaveLength(2);
    expect(await store.head(`${server.url}/nope.bin`)).toBeUndefined();
    expect(await store.get(`${server.url}/nope.bin`)).toEqual({ status: 'missing' });
  });

  it('gives up on a store that keeps failing, saying how often it tried', async () => {
    const server = await serve();
    server.inject('/small.json', { kind: 'status', status: 502, times: 10 });
    await expect(client().get(`${server.url}/small.json`)).rejects.toThrow(/: 502 Bad Gateway, after 4 attempts$/);
    expect(server.requests).toHaveLength(4);
  });

  it('answers a conditional GET with not-modified while the validators hold', async () => {
    const server = await serve();
    const store = client();
    const first = await store.get(`${server.url}/small.json`);
    expect(first.status).toBe('ok');
    if (first.status !== 'ok') return;
    expect(first.bytes.toString()).toBe('{"a":1}\n');
    expect(await store.get(`${server.url}/small.json`, { since: { etag: first.etag, lastModified: first.lastModified } })).toEqual({ status: 'not-modified' });
    expect(server.requests.map((r) => r.status)).toEqual([200, 304]);
  });

  it('stops a stalled read at once when aborted', async () => {
    const server = await serve();
    server.inject('/big.bin', { kind: 'stall' });
    const controller = new AbortController();
    const body = await client([], {}, 60_000).open(`${server.url}/big.bin`, { signal: controller.signal });
    const started = performance.now();
    setTimeout(() => controller.abort(), 100);
    const error = await readAll(body).catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
