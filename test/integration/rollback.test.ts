/**
 * Operating the loader against a real Elasticsearch: rollback in one alias update (and a
 * follower that then waits for a newer bundle), two followers on one cluster loading a bundle
 * once, and SIGTERM in the middle of a load leaving nothing half-built behind.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type BundleRow, readManifest } from '../../generator/read-bundle.ts';
import { publishBundle } from '../../generator/publish.ts';
import { writeBundle } from '../../generator/write-bundle.ts';
import { writeNextExport } from '../../generator/next-export.ts';
import { loadConfig, parseCycleStarts } from '../../src/config.ts';
import { spawnLoader } from '../../harness/loader-process.ts';
import { startServer } from '../../src/server.ts';
import { type GenerationDoc, aliasName } from '../../src/indices/generation.ts';
import { LoadError } from '../../loader/errors.ts';
import { follow } from '../../loader/follow.ts';
import { type LoadOptions, loadBundle } from '../../loader/load-bundle.ts';
import { rollback } from '../../loader/rollback.ts';
import { bundleIdOf } from '../support/bundle-id.ts';
import { deleteIndices, testClient, uniquePrefix } from '../support/elasticsearch.ts';

const cycleStarts = parseCycleStarts('5=2026-03-11T09:00:00Z,6=2026-06-25T09:00:00Z');
let client: Client;
let work: string;
const bundles: Record<string, string> = {};

/** The first killmail leaves each next export: every bundle differs from the one before. */
async function* dropFirst(rows: AsyncIterable<BundleRow>): AsyncGenerator<BundleRow> {
  let first = true;
  for await (const row of rows) {
    if (!first) yield row;
    first = false;
  }
}

function options(prefix: string, extra: Partial<LoadOptions> = {}): LoadOptions {
  return { client, prefix, dataDir: path.join(work, 'data'), cycleStarts, ...extra };
}

async function live(prefix: string): Promise<GenerationDoc | undefined> {
  const response = await client.search<GenerationDoc>({ index: aliasName(prefix, 'meta') }, { ignore: [404] });
  return response.hits?.hits[0]?._source;
}

async function aliasTargets(prefix: string): Promise<string[]> {
  const aliases = await client.indices.getAlias({ name: `${prefix}-*` });
  return Object.keys(aliases).sort();
}

beforeAll(async () => {
  client = testClient();
  work = await mkdtemp(path.join(tmpdir(), 'operate-'));
  bundles.a = path.join(work, 'a');
  await writeBundle(bundles.a, { scale: 1, seed: 61 });
  let previous = bundles.a;
  for (const [name, later] of [['b', 1], ['c', 2], ['d', 3]] as const) {
    bundles[name] = path.join(work, name);
    await writeNextExport(previous, bundles[name]!, { killmails: dropFirst }, later * 3_600_000);
    previous = bundles[name]!;
  }
  await writeBundle(path.join(work, 'big'), { scale: 40, seed: 62 });
}, 300_000);

afterAll(async () => {
  await client.close();
  await rm(work, { recursive: true, force: true });
});

describe('rollback', () => {
  const prefix = uniquePrefix('rollback');
  afterAll(() => deleteIndices(client, prefix));

  it('makes the previous generation live again in one alias update, and a follower waits for a newer bundle', async () => {
    const first = await loadBundle(bundles.a!, options(prefix));
    const targetsA = await aliasTargets(prefix);
    const second = await loadBundle(bundles.b!, options(prefix));
    expect((await live(prefix))!.generation).toBe(second.generation);

    const { from, to } = await rollback(client, prefix);
    expect([from.generation, to.generation]).toEqual([second.generation, first.generation]);
    expect((await live(prefix))!.generation).toBe(first.generation);
    expect(await aliasTargets(prefix)).toEqual(targetsA);
    expect((await client.count({ index: aliasName(prefix, 'killmails') })).count).toBe(first.counts.killmails);

    const lines: string[] = [];
    await follow({ ...options(prefix), source: bundles.b!, everyMs: 1000, log: (l) => lines.push(l), checks: 1 });
    expect(lines.at(-1)).toMatch(/skipped: bundle \w+ was rolled back from; waiting for a newer one/);
    expect((await live(prefix))!.generation).toBe(first.generation);

    await follow({ ...options(prefix), source: bundles.c!, everyMs: 1000, log: (l) => lines.push(l), checks: 1 });
    expect(lines.at(-1)).toMatch(/loaded: bundle \w+ is live as generation/);
    const third = (await live(prefix))!;
    expect(third.manifestSha256).not.toBe(from.manifestSha256);
    // The generation rolled back to stays kept (first in line for the next rollback); the bad one goes.
    expect((await rollback(client, prefix)).to.generation).toBe(first.generation);
  });

  it('refuses a generation that is not kept, naming the kept ones', async () => {
    const error = await rollback(client, prefix, '20200101000000000-deadbeef').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect((error as Error).message).toMatch(/is not kept \(kept besides the live one: \d{17}-[0-9a-f]{8}/);
  });
});

describe('followers', () => {
  const prefix = uniquePrefix('followers');
  afterAll(() => deleteIndices(client, prefix));

  it('two followers on one cluster load a new bundle once', async () => {
    await loadBundle(bundles.a!, options(prefix));
    const logs: string[][] = [[], []];
    await Promise.all(logs.map((lines) => follow({ ...options(prefix), source: bundles.d!, everyMs: 1000, log: (l) => lines.push(l), checks: 1 })));
    const outcomes = logs.map((lines) => /: (\w+): /.exec(lines.at(-1)!)![1]).sort();
    expect(outcomes).toEqual(['live', 'loaded']);
    const generations = await client.search({ index: `${prefix}-meta-*`, size: 0, track_total_hits: true });
    expect((generations.hits.total as { value: number }).value).toBe(2);
  });

  it('picks up a second publication within one check, from the registry\'s pointer layout', async () => {
    const published = path.join(work, 'published');
    await publishBundle(bundles.b!, path.join(published, 'registry'));
    const lines: string[] = [];
    let republished: Promise<unknown> | undefined;
    const following = follow({
      ...options(prefix),
      source: path.join(published, 'registry'),
      everyMs: 1500,
      checks: 2,
      log: (line) => {
        lines.push(line);
        // The registry publishes the next export once the first check is done.
        if (line.startsWith('check ') && !republished) republished = publishBundle(bundles.c!, path.join(published, 'registry'));
      },
    });
    await following;
    await republished;
    const checks = lines.filter((l) => l.startsWith('check '));
    expect(checks).toHaveLength(2);
    expect(checks[0]).toMatch(/: loaded: /);
    expect(checks[1]).toMatch(/: loaded: /);
    expect((await live(prefix))!.bundleId).toBe(await bundleIdOf(bundles.c!));
  });

  it('shows on /metrics the last check, the last load, the live bundle\'s generatedAt and the lag to live', async () => {
    const config = loadConfig({ INDEX_PREFIX: prefix, ES_URL: inject('esUrl'), PORT: '0', LOG_LEVEL: 'silent', DATA_DIR: path.join(work, 'data') });
    const gateway = await startServer(config, inject('esUrl'));
    try {
      const text = await (await fetch(`${gateway.url}/metrics`)).text();
      const sample = (name: string) => {
        const match = new RegExp(`^${config.metricsPrefix}_${name}\\{(\\w+)="([^"]+)"\\} (\\S+)$`, 'm').exec(text);
        expect(match, name).not.toBeNull();
        return { label: match![2], value: Number(match![3]) };
      };
      const now = Date.now() / 1000;
      const check = sample('follower_last_check_timestamp_seconds');
      expect(check.label).toBe(path.join(work, 'published', 'registry'));
      expect(now - check.value).toBeLessThan(120);
      expect(sample('follower_last_check_failed').value).toBe(0);
      expect(now - sample('follower_last_load_timestamp_seconds').value).toBeLessThan(120);
      const manifest = await readManifest(bundles.c!);
      const generated = sample('live_bundle_generated_timestamp_seconds');
      expect(generated.value).toBeCloseTo(Date.parse(manifest.generatedAt) / 1000, 2);
      // Published through the pointer: the lag runs from its publishedAt to the load.
      const pointer = JSON.parse(await readFile(path.join(work, 'published', 'registry', 'latest', 'manifest.json'), 'utf8'));
      const published = sample('live_bundle_published_timestamp_seconds').value;
      expect(published).toBeCloseTo(Date.parse(pointer.publishedAt) / 1000, 2);
      const lag = sample('live_lag_seconds').value;
      expect(lag).toBeCloseTo(sample('live_generation_timestamp_seconds').value - published, 1);
      expect(lag).toBeGreaterThan(0);
      expect(lag).toBeLessThan(120);
    } finally {
      await gateway.close();
    }
  });
});

describe('SIGTERM in the middle of a load', () => {
  const prefix = uniquePrefix('sigterm');
  afterAll(() => deleteIndices(client, prefix));

  it('deletes what the load built, releases the lock and leaves the live generation serving', async () => {
    await loadBundle(bundles.a!, options(prefix));
    const before = (await live(prefix))!.generation;
    const child = spawnLoader([path.join(work, 'big')], { ES_URL: inject('esUrl'), INDEX_PREFIX: prefix, DATA_DIR: path.join(work, 'data') }, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (chunk) => {
        stderr += chunk;
        // The first file is in: the load is well under way.
        if (/entities\.jsonl: \d+ rows in/.test(stderr)) resolve();
      });
      exited.then(() => reject(new Error(`the load ended before it could be stopped:\n${stderr}`)));
    });
    child.kill('SIGTERM');
    expect(await exited).toBe(1);
    expect(stderr).toMatch(/interrupted/);
    expect(stderr).toMatch(/the live generation is unchanged/);
    expect((await live(prefix))!.generation).toBe(before);
    const generations = new Set(Object.keys(await client.indices.get({ index: `${prefix}-*` })).map((name) => /(\d{17}-[0-9a-f]{8})$/.exec(name)?.[1]).filter(Boolean));
    expect([...generations]).toEqual([before]);
    expect((await client.get({ index: `${prefix}-state`, id: 'lock' }, { ignore: [404] })).found).toBe(false);
  });
});
