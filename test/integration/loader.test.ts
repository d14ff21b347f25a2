/**
 * The loader against a real Elasticsearch: a generated bundle loads with every count proven
 * from the bundle files; `.gz`-only files load; bad bundles are refused with `file:line` and
 * the previous generation still serving; a reload swaps atomically under a polling reader;
 * unknown fields survive.
 */
import { createHash } from 'node:crypto';
import { appendFile, cp, mkdir, mkdtemp, readFile, rm, truncate, unlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readManifest, readRows } from '../../generator/read-bundle.ts';
import { IDENTITY, distinctIds } from '../../harness/bundle-counts.ts';
import { writeBundle } from '../../generator/write-bundle.ts';
import { parseCycleStarts } from '../../src/config.ts';
import { aliasName } from '../../src/indices/generation.ts';
import { LoadError } from '../../loader/errors.ts';
import { type LoadOptions, loadBundle } from '../../loader/load-bundle.ts';
import { deleteIndices, testClient, uniquePrefix } from '../support/elasticsearch.ts';
import { storedRows } from '../support/stored-rows.ts';

const cycleStarts = parseCycleStarts('5=2026-03-11T09:00:00Z,6=2026-06-25T09:00:00Z');

let client: Client;
let work: string;
let bundleA: string;
let bundleB: string;
const prefix = uniquePrefix('loader');

function options(extra: Partial<LoadOptions> = {}): LoadOptions {
  // 8 requests in flight: files load two at a time, so a refused file stops the one beside it too.
  return { client, prefix, dataDir: path.join(work, 'data'), cycleStarts, concurrency: 8, ...extra };
}

async function liveGenerationId(): Promise<string | undefined> {
  const response = await client.search<{ generation: string }>({ index: aliasName(prefix, 'meta') }, { ignore: [404] });
  return response.hits?.hits[0]?._source?.generation;
}

async function expectRefused(dir: string, pattern: RegExp): Promise<void> {
  const before = await liveGenerationId();
  const error = await loadBundle(dir, options({ force: true })).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(LoadError);
  expect((error as LoadError).message).toMatch(pattern);
  // The bundle's fault: a follower does not try it again.
  expect((error as LoadError).transient).toBe(false);
  expect(await liveGenerationId()).toBe(before);
  // Nothing half-built is left: only kept generations have indices.
  const indices = Object.keys((await client.indices.get({ index: `${prefix}-*` })) ?? {});
  const generations = new Set(indices.flatMap((n) => /-(\d{17}-[0-9a-f]{8})$/.exec(n)?.[1] ?? []));
  expect(generations.size).toBeLessThanOrEqual(2);
}

beforeAll(async () => {
  client = testClient();
  work = await mkdtemp(path.join(tmpdir(), 'loader-'));
  bundleA = path.join(work, 'a');
  bundleB = path.join(work, 'b');
  await writeBundle(bundleA, { scale: 2, seed: 1 });
  await writeBundle(bundleB, { scale: 2, seed: 2 });
});

afterAll(async () => {
  await deleteIndices(client, prefix);
  await client.close();
  await rm(work, { recursive: true, force: true });
});

describe('loading a bundle', () => {
  it('loads every file; rows match the manifest and documents match the distinct ids in the files', async () => {
    const summary = await loadBundle(bundleA, options());
    expect(summary.status).toBe('loaded');
    const manifest = await readManifest(bundleA);
    for (const [stem, identity] of Object.entries(IDENTITY)) {
      const entry = manifest.files.find((f: { path: string }) => f.path === `${stem}.jsonl`);
      if (!entry) continue;
      const { rows, ids } = await distinctIds(bundleA, stem);
      expect(rows, stem).toBe(entry.rowCount);
      const count = (await client.count({ index: aliasName(prefix, stem) })).count;
      expect(count, stem).toBe(ids.size);
      expect(summary.counts[stem]).toBe(ids.size);
      void identity;
    }
  });

  it('loads files published only as .jsonl.gz', async () => {
    const gzOnly = (await readManifest(bundleA)).files
      .map((f: { path: string }) => f.path)
      .filter((p: string) => !existsSync(path.join(bundleA, p)) && existsSync(path.join(bundleA, `${p}.gz`)));
    expect(gzOnly.length).toBeGreaterThan(0);
    for (const file of gzOnly) {
      const stem = file.replace(/\.jsonl$/, '');
      const { ids } = await distinctIds(bundleA, stem);
      expect((await client.count({ index: aliasName(prefix, stem) })).count, file).toBe(ids.size);
    }
  });

  it('keeps rows verbatim, unknown fields included', async () => {
    let checked = 0;
    for await (const { row } of readRows(bundleA, 'entities.jsonl')) {
      const known = new Set(['id', 'slug', 'entityType', 'name', 'displayName', 'summary', 'environment', 'cycle', 'updatedAt']);
      if (Object.keys(row).every((k) => known.has(k))) continue;
      const [hit] = await storedRows(client, { index: aliasName(prefix, 'entities'), query: { term: { id: row.id } } });
      expect(hit?.row).toEqual(row);
      checked += 1;
    }
    expect(checked).toBeGreaterThan(0);
  });

  it('is a no-op for the live bundle unless forced', async () => {
    const live = await liveGenerationId();
    expect((await loadBundle(bundleA, options())).status).toBe('unchanged');
    expect(await liveGenerationId()).toBe(live);
    const forced = await loadBundle(bundleA, options({ force: true }));
    expect(forced.status).toBe('loaded');
    expect(await liveGenerationId()).toBe(forced.generation);
  });
});

describe('refusing bad bundles', () => {
  async function copyOf(name: string): Promise<string> {
    const dir = path.join(work, name);
    await cp(bundleA, dir, { recursive: true });
    return dir;
  }

  it('refuses a corrupt line with file:line', async () => {
    const dir = await copyOf('corrupt');
    await appendFile(path.join(dir, 'killmails.jsonl'), '{"id": broken\n');
    await expectRefused(dir, /^killmails\.jsonl:\d+: invalid JSON/);
  });

  it('refuses a checksum mismatch', async () => {
    const dir = await copyOf('checksum');
    const file = path.join(dir, 'sources.jsonl');
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace(/"title":"./, '"title":"#'));
    await expectRefused(dir, /^sources\.jsonl: sha256 mismatch/);
  });

  it('refuses a truncated file (row count and size)', async () => {
    const dir = await copyOf('truncated');
    const file = path.join(dir, 'killmails.jsonl');
    const size = (await readFile(file)).length;
    await truncate(file, size - 10);
    await expectRefused(dir, /^killmails\.jsonl(:\d+)?: /);
  });

  it('follows a latest/ publish pointer, and refuses one whose manifest hash differs', async () => {
    const root = path.join(work, 'published');
    const manifestBytes = await readFile(path.join(bundleB, 'manifest.json'));
    const bundleId = createHash('sha256').update(manifestBytes).digest('hex');
    await cp(bundleB, path.join(root, 'bundles', bundleId), { recursive: true });
    const pointer = {
      schemaVersion: 'registry.export_publish_pointer.v1',
      bundleId,
      manifestKey: `registry/current/bundles/${bundleId}/manifest.json`,
      manifestSha256: bundleId,
    };
    await mkdir(path.join(root, 'latest'));
    await writeFile(path.join(root, 'latest', 'manifest.json'), JSON.stringify(pointer));
    const summary = await loadBundle(path.join(root, 'latest'), options({ force: true }));
    expect(summary.bundleId).toBe(bundleId);
    expect(await liveGenerationId()).toBe(summary.generation);
    await writeFile(path.join(root, 'latest', 'manifest.json'), JSON.stringify({ ...pointer, manifestSha256: '0'.repeat(64) }));
    await expectRefused(path.join(root, 'latest'), /^manifest\.json: manifest of bundle .* does not match the pointer's manifestSha256/);
  });

  it('refuses a line that is not valid UTF-8 with file:line, instead of serving U+FFFD', async () => {
    const dir = await copyOf('utf8');
    const file = path.join(dir, 'sources.jsonl');
    const lines = (await readFile(file)).toString('utf8').split('\n');
    const bad = Buffer.from(`${lines[1]!.replace(/"title":"/, '"title":"\u0001')}`, 'utf8');
    // Replace the marker with a lone continuation byte: bytes no decoder can read.
    bad[bad.indexOf(1)] = 0x80;
    await writeFile(file, Buffer.concat([Buffer.from(`${lines[0]}\n`), bad, Buffer.from(`\n${lines.slice(2).join('\n')}`)]));
    await expectRefused(dir, /^sources\.jsonl:2: not valid UTF-8$/);
  });

  it('names the .gz file and the last good line when a gzip-only file is truncated', async () => {
    const dir = await copyOf('truncated-gz');
    const file = path.join(dir, 'facts.jsonl.gz');
    expect(existsSync(file)).toBe(true);
    await truncate(file, Math.floor((await readFile(file)).length / 2));
    await expectRefused(dir, /^facts\.jsonl\.gz: truncated or corrupt gzip \(unexpected end of file\) after line \d+$/);
  });

  it('names the line of a row Elasticsearch refuses (a key repeated inside the row)', async () => {
    const dir = await copyOf('refused');
    const file = path.join(dir, 'sources.jsonl');
    const lines = (await readFile(file, 'utf8')).split('\n');
    lines[2] = lines[2]!.replace(/^\{/, '{"title":"first",');
    await writeFile(file, lines.join('\n'));
    await expectRefused(dir, /^sources\.jsonl:3: Elasticsearch refused the row \(document_parsing_exception: .*Duplicate field 'title'/);
  });

  it('says so when the bundle directory does not exist', async () => {
    await expectRefused(path.join(work, 'no-such-bundle'), /^bundle directory not found: .*no-such-bundle$/);
  });

  it('refuses a missing file', async () => {
    const dir = await copyOf('missing');
    await unlink(path.join(dir, 'relations.jsonl'));
    await expectRefused(dir, /^relations\.jsonl: listed in the manifest but missing/);
  });
});

describe('reloading', () => {
  it('swaps atomically: a polling reader sees the old generation or the new one, never empty or mixed', async () => {
    await loadBundle(bundleA, options({ force: true }));
    const countA = (await client.count({ index: aliasName(prefix, 'entities') })).count;
    const { ids } = await distinctIds(bundleB, 'entities');
    let polls = 0;
    let stop = false;
    const seen = new Set<string>();
    const poller = (async () => {
      while (!stop) {
        const response = await client.search({
          index: [aliasName(prefix, 'entities'), aliasName(prefix, 'facts'), aliasName(prefix, 'meta')].join(','),
          size: 0,
          aggs: { indices: { terms: { field: '_index', size: 50 } } },
        });
        const buckets = (response.aggregations?.indices as { buckets: { key: string; doc_count: number }[] }).buckets;
        const generations = new Set(buckets.map((b) => b.key.slice(-26)));
        expect(generations.size).toBe(1);
        const entities = buckets.find((b) => b.key.startsWith(aliasName(prefix, 'entities-')))?.doc_count;
        expect([countA, ids.size]).toContain(entities);
        seen.add([...generations][0]!);
        polls += 1;
      }
    })();
    const summary = await loadBundle(bundleB, options());
    await new Promise((resolve) => setTimeout(resolve, 300));
    stop = true;
    await poller;
    expect(summary.status).toBe('loaded');
    expect(polls).toBeGreaterThan(5);
    expect(seen.size).toBe(2);
    expect((await client.count({ index: aliasName(prefix, 'entities') })).count).toBe(ids.size);
  });
});
