/**
 * Loading bundles from where the registry publishes them: an S3-compatible store (moto, SigV4
 * and IAM enforced) and a static http server with faults injected, in the publisher's pointer
 * layout and in the flat layout. Counts are proven against the bundle files; a dropped
 * connection and 503s are survived (the resume is seen by the server as a Range request); a
 * wrong secret and a missing file are one clear line with the live generation unchanged; the
 * pointer poll answers `unchanged` until a re-publish.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { publishBundle } from '../../generator/publish.ts';
import { writeBundle } from '../../generator/write-bundle.ts';
import { parseCycleStarts } from '../../src/config.ts';
import { runLoader } from '../../harness/loader-process.ts';
import { type GenerationDoc, aliasName } from '../../src/indices/generation.ts';
import { type ObjectStore, type RetryEvent, createObjectStore } from '../../src/store/object-store.ts';
import { LoadError } from '../../loader/errors.ts';
import { type LoadOptions, type LoadSummary, loadBundle } from '../../loader/load-bundle.ts';
import { pollSource } from '../../loader/poll.ts';
import { expectedCounts } from '../../harness/bundle-counts.ts';
import { deleteIndices, testClient, uniquePrefix } from '../support/elasticsearch.ts';
import { type MotoServer, startMoto } from '../../harness/moto.ts';
import { type StaticServer, startStaticServer } from '../support/static-server.ts';

const BUCKET = 'registry-exports';
const prefix = uniquePrefix('storeload');
const cliPrefix = uniquePrefix('storecli');
const cycleStarts = parseCycleStarts('5=2026-03-11T09:00:00Z,6=2026-06-25T09:00:00Z');

let moto: MotoServer;
let client: Client;
let work: string;
let bundleA: string;
let bundleB: string;
const servers: StaticServer[] = [];

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const manifestSha = async (dir: string) => sha256(await readFile(path.join(dir, 'manifest.json')));

function options(store: ObjectStore, extra: Partial<LoadOptions> = {}): LoadOptions {
  return { client, prefix, dataDir: path.join(work, 'data'), cycleStarts, store, force: true, ...extra };
}

/** A client of a static server that does not wait long between retries, recording them. */
function httpStore(events: RetryEvent[]): ObjectStore {
  return createObjectStore({ timeoutMs: 5_000, attempts: 4 }, { backoff: { baseMs: 20, maxMs: 500 }, onRetry: (e) => events.push(e) });
}

async function live(): Promise<GenerationDoc | undefined> {
  const response = await client.search<GenerationDoc>({ index: aliasName(prefix, 'meta') }, { ignore: [404] });
  return response.hits?.hits[0]?._source;
}

/** The load made live what the bundle files say: one document per distinct identity, per index. */
async function expectLoaded(summary: LoadSummary, dir: string): Promise<void> {
  expect(summary.status).toBe('loaded');
  const expected = await expectedCounts(dir);
  expect(Object.keys(expected).length).toBeGreaterThan(8);
  for (const [stem, count] of Object.entries(expected)) {
    expect(summary.counts[stem], stem).toBe(count);
    expect((await client.count({ index: aliasName(prefix, stem) })).count, stem).toBe(count);
  }
  expect((await live())?.generation).toBe(summary.generation);
}

async function refusal(source: string, store: ObjectStore): Promise<LoadError> {
  const before = (await live())?.generation;
  const error = await loadBundle(source, options(store)).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(LoadError);
  expect((await live())?.generation).toBe(before);
  return error as LoadError;
}

async function serve(root: string, ranges = true): Promise<StaticServer> {
  const server = await startStaticServer(root, { ranges });
  servers.push(server);
  return server;
}

beforeAll(async () => {
  client = testClient();
  work = await mkdtemp(path.join(tmpdir(), 'store-load-'));
  bundleA = path.join(work, 'a');
  bundleB = path.join(work, 'b');
  [moto] = await Promise.all([startMoto(), writeBundle(bundleA, { scale: 1, seed: 41 }), writeBundle(bundleB, { scale: 1, seed: 42 })]);
  await moto.createBucket(BUCKET);
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await deleteIndices(client, prefix);
  await deleteIndices(client, cliPrefix);
  await client.close();
  await moto?.stop();
  await rm(work, { recursive: true, force: true });
});

describe('from s3:// (moto, SigV4)', () => {
  it('loads the pointer layout named by its prefix; its latest/ and its bundle folder are the same bundle', async () => {
    const published = await publishBundle(bundleA, `s3://${BUCKET}/registry`, { store: moto.store() });
    expect(published.bundleId).toBe(await manifestSha(bundleA));
    const summary = await loadBundle(`s3://${BUCKET}/registry`, options(moto.store()));
    await expectLoaded(summary, bundleA);
    const doc = (await live())!;
    expect(doc.exportBase).toBe(`s3://${BUCKET}/registry/bundles/${published.bundleId}/`);
    expect(doc.exportDir).toBeUndefined();
    expect(doc.files.every((f) => typeof f.storedBytes === 'number' && f.etag)).toBe(true);
    for (const source of [`s3://${BUCKET}/registry/latest`, `s3://${BUCKET}/registry/bundles/${published.bundleId}/`]) {
      expect((await loadBundle(source, options(moto.store(), { force: false }))).status, source).toBe('unchanged');
    }
  });

  it('loads the flat layout (latest/ holding the manifest and the files)', async () => {
    await publishBundle(bundleB, `s3://${BUCKET}/flat`, { store: moto.store(), layout: 'flat' });
    const summary = await loadBundle(`s3://${BUCKET}/flat`, options(moto.store()));
    await expectLoaded(summary, bundleB);
    expect((await live())!.exportBase).toBe(`s3://${BUCKET}/flat/latest/`);
  });

  it('refuses a wrong secret in one line naming the URL and the 403, never the secret', async () => {
    const error = await refusal(`s3://${BUCKET}/registry`, moto.store({ secretAccessKey: 'not-the-secret' }));
    expect(error.message).toMatch(/^GET http:\/\/127\.0\.0\.1:\d+\/registry-exports\/registry\/manifest\.json: 403 Forbidden \(SignatureDoesNotMatch\)$/);
  });

  it('refuses a bundle with a listed file missing, before loading anything', async () => {
    const { bundle } = await publishBundle(bundleA, `s3://${BUCKET}/holes`, { store: moto.store(), bundleId: 'with-a-hole' });
    await moto.store().delete(`${bundle}relations.jsonl`);
    const error = await refusal(`s3://${BUCKET}/holes`, moto.store());
    expect(error.message).toBe('relations.jsonl: listed in the manifest but missing (neither the file nor its .gz twin is there)');
  });

  it('says where it looked when a source holds no bundle', async () => {
    const error = await refusal(`s3://${BUCKET}/nothing-here`, moto.store());
    expect(error.message).toBe(`manifest.json: no manifest.json in s3://${BUCKET}/nothing-here/ (nor in s3://${BUCKET}/nothing-here/latest/)`);
  });
});

describe('from http:// (a static server with faults)', () => {
  it('loads through a connection dropped mid-file and 503s, resuming with a Range request', async () => {
    await publishBundle(bundleA, path.join(work, 'site-a', 'registry'));
    const server = await serve(path.join(work, 'site-a'));
    server.inject('/latest/manifest.json', { kind: 'status', status: 503, retryAfter: '0' });
    server.inject('/killmails.jsonl', { kind: 'status', status: 503, times: 2 });
    server.inject('/killmails.jsonl', { kind: 'drop' });
    server.inject('/events.jsonl.gz', { kind: 'drop' });
    const events: RetryEvent[] = [];
    await expectLoaded(await loadBundle(`${server.url}/registry`, options(httpStore(events))), bundleA);
    const resumed = server.requests.filter((r) => r.status === 206);
    expect(resumed.map((r) => path.basename(r.path)).sort()).toEqual(['events.jsonl.gz', 'killmails.jsonl']);
    expect(resumed.every((r) => /^bytes=[1-9]\d*-$/.test(r.range!) && r.ifMatch)).toBe(true);
    expect(server.requests.filter((r) => r.status === 503)).toHaveLength(3);
    expect(events.length).toBe(5);
  });

  it('loads the flat layout from a server without ranges, reading a dropped file again from its start', async () => {
    await publishBundle(bundleB, path.join(work, 'site-b', 'registry'), { layout: 'flat' });
    const server = await serve(path.join(work, 'site-b'), false);
    server.inject('/facts.jsonl.gz', { kind: 'drop' });
    await expectLoaded(await loadBundle(`${server.url}/registry/latest/`, options(httpStore([]))), bundleB);
    const facts = server.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/facts.jsonl.gz'));
    expect(facts.map((r) => r.status)).toEqual([200, 200]);
  });

  it('refuses a file that stays unavailable in one line naming the URL and the status', async () => {
    await publishBundle(bundleA, path.join(work, 'site-c', 'registry'));
    const server = await serve(path.join(work, 'site-c'));
    server.inject('/sources.jsonl', { kind: 'status', status: 503, times: 100 });
    const error = await refusal(`${server.url}/registry`, httpStore([]));
    expect(error.message).toMatch(/^HEAD http:\/\/127\.0\.0\.1:\d+\/registry\/bundles\/[0-9a-f]{64}\/sources\.jsonl: 503 Service Unavailable, after 4 attempts$/);
  });
});

describe('stopping a load', () => {
  it('stops at once when aborted mid-file (a stalled store read), leaving the live generation and nothing else', async () => {
    await publishBundle(bundleB, path.join(work, 'site-d', 'registry'));
    const server = await serve(path.join(work, 'site-d'));
    server.inject('/events.jsonl.gz', { kind: 'stall' });
    const before = (await live())?.generation;
    const controller = new AbortController();
    const store = createObjectStore({ timeoutMs: 60_000, attempts: 4 });
    const loading = loadBundle(`${server.url}/registry`, options(store, { signal: controller.signal })).catch((e: unknown) => e);
    while (!server.requests.some((r) => r.method === 'GET' && r.path.endsWith('/events.jsonl.gz'))) await new Promise((resolve) => setTimeout(resolve, 20));
    const aborted = performance.now();
    controller.abort();
    const error = await loading;
    expect((error as Error).name).toBe('AbortError');
    expect(performance.now() - aborted).toBeLessThan(5_000);
    expect((await live())?.generation).toBe(before);
    const indices = Object.keys((await client.indices.get({ index: `${prefix}-*` })) ?? {});
    expect(new Set(indices.flatMap((n) => /-(\d{17}-[0-9a-f]{8})$/.exec(n)?.[1] ?? [])).size).toBeLessThanOrEqual(2);
  });
});

describe('polling a pointer', () => {
  it('answers unchanged while the pointer stays, and the new bundle after a re-publish (s3://)', async () => {
    const store = moto.store();
    const source = `s3://${BUCKET}/polled`;
    await publishBundle(bundleA, source, { store, now: new Date('2026-07-01T10:00:00Z') });
    const first = await pollSource(source, { store });
    expect(first).toMatchObject({ status: 'changed', bundleId: await manifestSha(bundleA), manifestSha256: await manifestSha(bundleA), publishedAt: '2026-07-01T10:00:00.000Z' });
    expect(first.validators.version.etag).toBeDefined();
    const second = await pollSource(source, { store, since: first.validators });
    expect(second.status).toBe('unchanged');
    await publishBundle(bundleB, source, { store, now: new Date('2026-07-01T11:00:00Z') });
    const third = await pollSource(source, { store, since: second.validators });
    expect(third).toMatchObject({ status: 'changed', bundleId: await manifestSha(bundleB), publishedAt: '2026-07-01T11:00:00.000Z' });
  });

  it('does the same for a directory (size, mtime, inode) and a flat manifest (its generatedAt)', async () => {
    const store = createObjectStore();
    const dir = path.join(work, 'polled-dir');
    await publishBundle(bundleA, dir, { layout: 'flat' });
    const first = await pollSource(dir, { store });
    const generatedAt = JSON.parse(await readFile(path.join(bundleA, 'manifest.json'), 'utf8')).generatedAt;
    expect(first).toMatchObject({ status: 'changed', bundleId: await manifestSha(bundleA), publishedAt: generatedAt });
    expect((await pollSource(dir, { store, since: first.validators })).status).toBe('unchanged');
    await publishBundle(bundleB, dir, { layout: 'flat' });
    expect(await pollSource(dir, { store, since: first.validators })).toMatchObject({ status: 'changed', bundleId: await manifestSha(bundleB) });
  });
});

describe('npm run load with an s3:// source', () => {
  function load(env: Record<string, string>, ...args: string[]) {
    return runLoader(args, { ES_URL: inject('esUrl'), INDEX_PREFIX: cliPrefix, DATA_DIR: path.join(work, 'cli-data'), ...moto.env, ...env });
  }

  it('reads the AWS_* variables: loads with the key, refuses a wrong secret with one line and exit 1', () => {
    const good = load({}, `s3://${BUCKET}/registry`);
    expect(good.status, good.stderr).toBe(0);
    expect(good.stdout).toMatch(/loaded generation/);
    const bad = load({ AWS_SECRET_ACCESS_KEY: 'wrong-secret-value' }, `s3://${BUCKET}/registry`, '--force');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/^load refused: GET http:\/\/127\.0\.0\.1:\d+\/registry-exports\/registry\/manifest\.json: 403 Forbidden \(SignatureDoesNotMatch\)\nthe live generation is unchanged\n$/);
    expect(bad.stderr).not.toContain('wrong-secret-value');
  });
});
