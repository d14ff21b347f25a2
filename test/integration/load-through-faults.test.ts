/**
 * The loader through the faults a node's death or a partition makes, planted by a proxy in front
 * of a real Elasticsearch (found by the rehearsal's master kills and partitions):
 * - an answer lost after Elasticsearch acted on it: a generation's index created (or cloned), the
 *   client saw the connection close and sent the create again, which answers
 *   `resource_already_exists_exception`. The name is the load's own, so the load goes on (3 of 3
 *   loads in flight at a master kill failed so);
 * - a count from a copy that was cut off before the writes (it answers 0): asked again, of
 *   another copy; a count still wrong fails the load as transient, so a follower tries the bundle
 *   again rather than refusing it for good (one partition cost a publication so);
 * - rows a node could not take because, to it, the new index did not exist yet (the 60-minute
 *   rehearsal, during a master cut off): transient too, where a row Elasticsearch refuses (400)
 *   refuses the bundle (loader.test).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { type IncomingMessage, type Server, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { writeBundle } from '../../generator/write-bundle.ts';
import { LoadError } from '../../loader/errors.ts';
import { cloneIndex, createIndex } from '../../loader/generations.ts';
import { loadBundle } from '../../loader/load-bundle.ts';
import { loadConfig } from '../../src/config.ts';
import { entities } from '../../src/indices/entities.ts';
import { createClient } from '../../src/search/client.ts';
import { deleteIndices, testClient, uniquePrefix } from '../support/elasticsearch.ts';

/**
 * What the proxy does with one request: pass it, lose ES's answer (cut the client's connection),
 * answer a count of 0, or answer a bulk request's every item 404 `index_not_found` (a node behind
 * the master's view of a new index).
 */
type Plant = 'pass' | 'lose' | 'zero' | 'unindexed';

/** Forwards every request to Elasticsearch, but as `plant` says; every planted request is noted. */
function faultyProxy(target: string, plant: (req: IncomingMessage) => Plant): Promise<{ url: string; planted: string[]; server: Server }> {
  const planted: string[] = [];
  const server = createServer((req, res) => {
    const what = plant(req);
    if (what !== 'pass') planted.push(`${what} ${req.method} ${new URL(req.url!, target).pathname}`);
    // A connection of its own per request (no agent): a kept-alive one Elasticsearch closed would fail the request.
    const forward = request(new URL(req.url!, target), { method: req.method, headers: req.headers, agent: false }, (answer) => {
      if (what === 'lose') {
        answer.resume();
        answer.on('end', () => req.socket.destroy());
        return;
      }
      if (what === 'unindexed') {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { items: Record<string, { status: number }>[] };
          const error = { type: 'index_not_found_exception', reason: 'no such index' };
          const items = body.items.map((item) => Object.fromEntries(Object.keys(item).map((action) => [action, { status: 404, error }])));
          res.writeHead(200, { 'content-type': 'application/json', 'x-elastic-product': 'Elasticsearch' }).end(JSON.stringify({ errors: true, items }));
        });
        return;
      }
      if (what === 'zero') {
        answer.resume();
        res.writeHead(200, { 'content-type': 'application/json', 'x-elastic-product': 'Elasticsearch' }).end(JSON.stringify({ count: 0, _shards: { total: 1, successful: 1, skipped: 0, failed: 0 } }));
        return;
      }
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, planted, server })));
}

const prefix = uniquePrefix('load-faults');
let es: Client;
const closers: (() => Promise<unknown> | void)[] = [];

/** A client through a faulty proxy of the test's own. */
async function faultyClient(plant: (req: IncomingMessage) => Plant): Promise<{ client: Client; planted: string[] }> {
  const proxy = await faultyProxy(inject('esUrl'), plant);
  const client = createClient(proxy.url, 60_000);
  closers.push(() => client.close(), () => void proxy.server.close());
  return { client, planted: proxy.planted };
}

beforeAll(() => {
  es = testClient();
});
afterAll(async () => {
  for (const close of closers) await close();
  await deleteIndices(es, prefix);
  await es?.close();
});

describe('creating a generation index when the answer is lost', () => {
  /** The first PUT to each path loses its answer. */
  const firstPutLost = () => {
    const seen = new Set<string>();
    return (req: IncomingMessage): Plant => (req.method === 'PUT' && !seen.has(req.url!) && seen.add(req.url!) ? 'lose' : 'pass');
  };

  it('creates it once and goes on', async () => {
    const { client, planted } = await faultyClient(firstPutLost());
    const index = `${prefix}-entities-1`;
    await createIndex(client, index, entities.mapping);
    expect(planted).toContain(`lose PUT /${index}`);
    expect((await es.indices.getSettings({ index }))[index]?.settings?.index?.number_of_replicas).toBe('0');
  });

  it('clones it once and goes on', async () => {
    const { client, planted } = await faultyClient(firstPutLost());
    const [from, to] = [`${prefix}-entities-2`, `${prefix}-entities-3`];
    await createIndex(es, from, entities.mapping);
    await es.index({ index: from, id: 'a', document: { id: 'a' }, refresh: true });
    await es.indices.addBlock({ index: from, block: 'write' });
    await cloneIndex(client, from, to);
    expect(planted).toContain(`lose PUT /${from}/_clone/${to}`);
    expect((await es.count({ index: to })).count).toBe(1);
  });
});

describe('an index counted on a copy that missed the writes', () => {
  let work: string;
  let bundle: string;
  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'load-faults-'));
    bundle = path.join(work, 'bundle');
    await writeBundle(bundle, { scale: 1, seed: 3 });
  });
  afterAll(() => rm(work, { recursive: true, force: true }));

  const entityCounts = (times: number) => {
    let left = times;
    return (req: IncomingMessage): Plant => (/-entities-[^/]*\/_count/.test(req.url!) && left-- > 0 ? 'zero' : 'pass');
  };
  const load = (client: Client, name: string) =>
    loadBundle(bundle, { client, prefix: `${prefix}-${name}`, dataDir: path.join(work, name), cycleStarts: loadConfig().cycleStarts, replicas: 0 });

  it('is counted again, and the load goes live once a copy answers right', async () => {
    const { client, planted } = await faultyClient(entityCounts(2));
    const summary = await load(client, 'recount');
    expect(planted.filter((p) => p.startsWith('zero'))).toHaveLength(2);
    expect(summary.status).toBe('loaded');
  });

  it('fails a load whose rows a node could not take (no such index, to it) as transient, not as a refused bundle', async () => {
    let left = 1;
    const { client, planted } = await faultyClient((req) => (/\/_bulk/.test(req.url!) && left-- > 0 ? 'unindexed' : 'pass'));
    const error = await load(client, 'unindexed').catch((e: unknown) => e);
    expect(planted.some((p) => p.startsWith('unindexed'))).toBe(true);
    expect(error).toBeInstanceOf(LoadError);
    expect((error as LoadError).message).toMatch(/could not take the row \(index_not_found_exception: no such index\)/);
    expect((error as LoadError).transient).toBe(true);
  });

  it('fails the load as transient (tried again), never as a refused bundle, when every ask is wrong', async () => {
    const { client } = await faultyClient(entityCounts(Infinity));
    const error = await load(client, 'wrong').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect((error as LoadError).message).toMatch(/entities-.* holds 0 documents for \d+ rows/);
    expect((error as LoadError).transient).toBe(true);
  });
});
