/** `/v1/sources`, `/v1/sources/{id}`, `/v1/artefacts/{id}`, expectations from the bundle files. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleRow, readAllRows, readManifest } from '../../generator/read-bundle.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';
import { byteCompare, inScope, walk } from '../support/expect.ts';

let gw: TestGateway;
let sources: BundleRow[];
let artefacts: BundleRow[];
let current: number;

beforeAll(async () => {
  gw = await startTestGateway({ name: 'provenance', scale: 2, seed: 3 });
  current = Math.max(...(await readManifest(gw.bundleDir)).cycles);
  sources = [...new Map((await readAllRows(gw.bundleDir, 'sources.jsonl')).map((r) => [r.id, r])).values()];
  artefacts = await readAllRows(gw.bundleDir, 'source_artefacts.jsonl');
}, 300_000);

afterAll(() => gw?.close());

/** The environment's sources and those without one, by kind then id. */
function expected(environment: string, where: (row: BundleRow) => boolean = () => true): string[] {
  const kind = (r: BundleRow) => r.sourceKind ?? r.kind ?? '';
  return sources
    .filter((r) => (r.environment === environment || r.environment === undefined) && where(r))
    .sort((a, b) => byteCompare(kind(a), kind(b)) || byteCompare(a.id, b.id))
    .map((r) => r.id);
}

describe('/v1/sources', () => {
  it('pages through every source of the environment by kind, then id (the reference stopped at 200, uncursored)', async () => {
    const { rows, pages } = await walk(gw, '/v1/sources', 3);
    expect(rows.map((r) => r.id)).toEqual(expected('stillness'));
    expect(pages).toBeGreaterThan(1);
    expect(rows[0]).toEqual(sources.find((s) => s.id === rows[0].id));
  });

  it('lists another environment', async () => {
    const other = sources.find((s) => s.environment && s.environment !== 'stillness')?.environment ?? 'nowhere';
    const { rows } = await walk(gw, `/v1/sources?environment=${other}`, 200);
    expect(rows.map((r) => r.id)).toEqual(expected(other));
  });

  it('filters by kind, by q and, when asked, by cycle', async () => {
    const kind = sources[0]!.kind as string;
    expect((await walk(gw, `/v1/sources?kind=${kind}`, 200)).rows.map((r) => r.id)).toEqual(expected('stillness', (r) => (r.sourceKind ?? r.kind) === kind));
    const word = (sources[0]!.title as string).split(' ')[0]!;
    const q = await walk(gw, `/v1/sources?q=${encodeURIComponent(word)}`, 200);
    const wordOf = (text: unknown) => String(text ?? '').toLowerCase().split(/[^\p{L}\p{N}]+/u);
    expect(q.rows.map((r) => r.id)).toEqual(
      expected('stillness', (r) => [r.id, r.kind, r.sourceKind, r.title, r.locator].some((t) => wordOf(t).includes(word.toLowerCase()))),
    );
    const cycled = await walk(gw, `/v1/sources?cycles=${current}`, 200);
    expect(cycled.rows.map((r) => r.id)).toEqual(expected('stillness', (r) => inScope(r.cycle, [current], current)));
  });

  it('returns a source and an artefact by id, 404 otherwise', async () => {
    const source = sources.at(-1)!;
    expect((await gw.get(`/v1/sources/${encodeURIComponent(source.id)}`)).body.data).toEqual(source);
    const artefact = artefacts.at(-1)!;
    expect((await gw.get(`/v1/artefacts/${encodeURIComponent(artefact.id)}`)).body.data).toEqual(artefact);
    expect((await gw.get('/v1/sources/source:nope')).body.error).toEqual({ code: 'not_found', message: 'Source not found.' });
    expect((await gw.get('/v1/artefacts/artefact:nope')).body.error).toEqual({ code: 'not_found', message: 'Artefact not found.' });
  });

  it('refuses parameters it does not take', async () => {
    const { status, body } = await gw.get('/v1/sources?type=x');
    expect(status).toBe(400);
    expect(body.error.details).toEqual({ parameter: 'type' });
  });
});
