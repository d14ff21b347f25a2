/**
 * Several facets in one `group_by`: each equals the single-field answer of the same request
 * without that facet's own filter (as a sidebar counts), `meta.count` is the rows under every
 * filter, and single-field answers are as they were. Expected counts are also computed from the
 * bundle files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleRow, readAllRows } from '../../generator/read-bundle.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { expectError } from '../support/expect.ts';

let gw: TestGateway;
let events: BundleRow[];

beforeAll(async () => {
  gw = await startTestGateway({ name: 'facets', scale: 2, seed: 51 });
  events = [...new Map((await readAllRows(gw.bundleDir, 'events.jsonl')).map((r) => [r.id, r])).values()];
}, 300_000);

afterAll(() => gw?.close());

const groups = async (query: string) => {
  const res = await gw.get(`/v1/events?${query}`);
  expect(res.status, JSON.stringify(res.body?.error)).toBe(200);
  return res.body;
};

describe('group_by with several fields', () => {
  it('answers each facet as its single-field answer without its own filter', async () => {
    const kind = events.find((r) => r.environment === 'stillness' && r.module)!.kind;
    const multi = await groups(`cycles=all&kind=${kind}&group_by=kind,module,cycle&include_unknown=true`);
    expect(Object.keys(multi.data)).toEqual(['kind', 'module', 'cycle']);
    // kind: the kind filter left out; module and cycle: under it.
    const kindAlone = await groups('cycles=all&group_by=kind&include_unknown=true');
    const moduleAlone = await groups(`cycles=all&kind=${kind}&group_by=module&include_unknown=true`);
    const cycleAlone = await groups(`cycles=all&kind=${kind}&group_by=cycle&include_unknown=true`);
    expect(multi.data.kind).toEqual(kindAlone.data);
    expect(multi.data.module).toEqual(moduleAlone.data);
    expect(multi.data.cycle).toEqual(cycleAlone.data);
    expect(multi.meta.facets.kind).toEqual({ count: kindAlone.meta.count, groupsCount: kindAlone.meta.groupsCount, groupsCountIsExact: kindAlone.meta.groupsCountIsExact, groupsAreExact: kindAlone.meta.groupsAreExact });
    // meta.count: every filter applies, as the bundle says.
    const expected = events.filter((r) => r.environment === 'stillness' && r.kind === kind).length;
    expect(multi.meta.count).toBe(expected);
    // The kind facet counts every stillness event by kind, from the files.
    const byKind = new Map<string, number>();
    for (const r of events.filter((e) => e.environment === 'stillness')) byKind.set(r.kind, (byKind.get(r.kind) ?? 0) + 1);
    for (const group of multi.data.kind) expect(group.count, group.key).toBe(byKind.get(group.key));
  });

  it('leaves a scope facet unscoped by its own field: environment and cycle', async () => {
    const entities = await readAllRows(gw.bundleDir, 'entities.jsonl');
    const multi = (await gw.get('/v1/entities?environment=utopia&group_by=environment,entityType')).body;
    // The environment facet leaves out the environment filter: every environment of the bundle.
    expect(new Set(multi.data.environment.map((g: { key: string }) => g.key))).toEqual(new Set(entities.map((r) => r.environment)));
    // The type facet stays in utopia.
    expect(multi.data.entityType).toEqual((await gw.get('/v1/entities?environment=utopia&group_by=entityType')).body.data);
  });

  it('takes histograms among its facets, and keeps single-field answers as they were', async () => {
    const multi = await groups('cycles=all&group_by=occurredAt:month,kind');
    expect(multi.data['occurredAt:month']).toEqual((await groups('cycles=all&group_by=occurredAt:month')).data);
    const single = await gw.get('/v1/events?cycles=all&group_by=kind');
    expect(Array.isArray(single.body.data)).toBe(true);
    expect(single.body.meta.facets).toBeUndefined();
  });

  it('refuses more than three fields, a repeated one, or an unknown one, naming group_by', async () => {
    expectError(await gw.get('/v1/events?group_by=kind,module,cycle,source_id'), 400, 'bad_request', 'group_by');
    expectError(await gw.get('/v1/events?group_by=kind,kind'), 400, 'bad_request', 'group_by');
    expectError(await gw.get('/v1/events?group_by=kind,nothing'), 400, 'bad_request', 'group_by');
  });

  it('counts a killer facet without the killer filter (filtered on every killer id)', async () => {
    const killmails = await readAllRows(gw.bundleDir, 'killmails.jsonl');
    const killer = killmails.find((r) => r.environment === 'stillness' && r.killerCharacterId)!.killerCharacterId;
    const multi = (await gw.get(`/v1/killmails?cycles=all&killer=${killer}&group_by=killer,system`)).body;
    expect(multi.data.killer).toEqual((await gw.get('/v1/killmails?cycles=all&group_by=killer')).body.data);
    expect(multi.data.system).toEqual((await gw.get(`/v1/killmails?cycles=all&killer=${killer}&group_by=system`)).body.data);
  });
});
