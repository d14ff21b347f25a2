/**
 * The bundle generator: determinism, a manifest that matches the bytes it describes, gz-only
 * files, the verifier's shape check, Go's escaping, the documented orders, and the data variety
 * the loader and gateway tests rely on. Every expectation is counted from the written files.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAllRows, readJson, readManifest, type BundleRow, type Manifest } from '../../generator/read-bundle.ts';
import { writeBundle, type BundleResult } from '../../generator/write-bundle.ts';

const CYCLE5 = Date.parse('2026-03-11T09:00:00Z');
const CYCLE6 = Date.parse('2026-06-25T09:00:00Z');
const TYPED = {
  systems: 'system', characters: 'character', tribes: 'tribe', assemblies: 'assembly', gates: 'gate', regions: 'region',
  constellations: 'constellation', items: 'item', materials: 'material', enemies: 'enemy', recipes: 'recipe',
  blueprints: 'blueprint', ships: 'ship', structures: 'structure',
};
const CURRENT_ORDER = [
  'character', 'tribe', 'assembly', 'gate', 'storage', 'turret', 'region', 'constellation', 'item', 'material', 'enemy',
  'recipe', 'blueprint', 'ship', 'structure', 'system', 'route',
];
const MANIFEST_ORDER = [
  'catalog.json', 'entities.jsonl', 'killmails.jsonl', 'sources.jsonl', 'facts.jsonl', 'relations.jsonl', 'entity_sources.jsonl',
  'source_artefacts.jsonl', 'current_entities.jsonl', 'current_relations.jsonl', 'ops_freshness.json', 'ops_cursors.json',
  'ops_chain_coverage.json', 'ops_source_gaps.json', 'events.jsonl', 'chain_objects.jsonl',
];

/** Instant of an RFC 3339 string as [epoch ms, sub-ms nanos], comparable lexicographically. */
function instant(text: string): [number, number] {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(text);
  if (!m) throw new Error(`not RFC 3339: ${text}`);
  const fraction = (m[2] ?? '').padEnd(9, '0');
  return [Date.parse(`${m[1]}.${fraction.slice(0, 3)}${m[3]}`), Number(fraction.slice(3))];
}
function compareInstants(a: string, b: string): number {
  const [am, an] = instant(a);
  const [bm, bn] = instant(b);
  return am - bm || an - bn;
}
function fractionDigits(text: string): number {
  return /\.(\d+)/.exec(text)?.[1]?.length ?? 0;
}
function cycleWindow(text: string): 6 | 5 | 0 {
  const ms = instant(text)[0];
  return ms >= CYCLE6 ? 6 : ms >= CYCLE5 ? 5 : 0;
}
function uncompressed(dir: string, name: string): Promise<Buffer> {
  const plain = path.join(dir, name);
  return existsSync(plain) ? readFile(plain) : readFile(`${plain}.gz`).then((gz) => gunzipSync(gz));
}
function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}
/** Asserts rows are sorted by time then id, both descending or both ascending. */
function expectOrdered(rows: readonly BundleRow[], time: (row: BundleRow) => string, direction: 'desc' | 'asc'): void {
  for (let n = 1; n < rows.length; n += 1) {
    const a = rows[n - 1]!;
    const b = rows[n]!;
    const byTime = compareInstants(time(a), time(b));
    const order = byTime !== 0 ? byTime : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
    expect(direction === 'desc' ? order > 0 : order < 0, `${a.id} before ${b.id}`).toBe(true);
  }
}

let work: string;
let dir: string;
let result: BundleResult;
let manifest: Manifest;
const rows: Record<string, BundleRow[]> = {};

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'generator-'));
  dir = path.join(work, 'a');
  result = await writeBundle(dir, { scale: 3, seed: 7 });
  manifest = await readManifest(dir);
  for (const file of manifest.files) {
    if (file.path.endsWith('.jsonl')) rows[file.path.replace('.jsonl', '')] = await readAllRows(dir, file.path);
  }
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('bytes and manifest', () => {
  it('writes byte-identical bundles for the same options, and different ones for another seed', async () => {
    const again = path.join(work, 'b');
    await writeBundle(again, { scale: 3, seed: 7 });
    const names = (await readdir(dir)).sort();
    expect((await readdir(again)).sort()).toEqual(names);
    for (const name of names) {
      expect((await readFile(path.join(again, name))).equals(await readFile(path.join(dir, name))), name).toBe(true);
    }
    const other = path.join(work, 'c');
    await writeBundle(other, { scale: 3, seed: 8 });
    expect((await readFile(path.join(other, 'manifest.json'))).equals(await readFile(path.join(dir, 'manifest.json')))).toBe(false);
  });

  it('lists every file in the documented order with the exact sha256, size and row count of its uncompressed bytes', async () => {
    expect(manifest.schemaVersion).toBe('registry.export_manifest.v1');
    expect(manifest.files.map((file) => file.path)).toEqual(MANIFEST_ORDER);
    for (const file of manifest.files) {
      const bytes = await uncompressed(dir, file.path);
      expect(createHash('sha256').update(bytes).digest('hex'), file.path).toBe(file.sha256);
      expect(bytes.length, file.path).toBe(file.sizeBytes);
      const newlines = bytes.filter((byte) => byte === 10).length;
      const expectedRows = file.path.endsWith('.jsonl') ? newlines + (bytes.length > 0 && bytes.at(-1) !== 10 ? 1 : 0) : bytes.length > 0 ? 1 : 0;
      expect(expectedRows, file.path).toBe(file.rowCount);
      expect(file.contentType).toBe(file.path.endsWith('.jsonl') ? 'application/x-ndjson' : 'application/json');
      expect(result.rowCounts[file.path.replace(/\.jsonl?$|\.json$/, '')]).toBe(file.rowCount);
    }
    expect(manifest.generatedAt).toMatch(/^2026-06-30T\d{2}:\d{2}:\d{2}\.\d{9}Z$/);
    expect(manifest).toMatchObject({ registry: 'black-relay-registry', apiVersion: 'v1', cycleScope: 'current', cycles: [6], includeUncycled: true });
    expect(manifest.database).toMatchObject({ engine: 'postgresql', database: 'registry' });
    const text = await readFile(path.join(dir, 'manifest.json'), 'utf8');
    expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
  });

  it('writes the default gz-only files only as .jsonl.gz and every other file only plain', async () => {
    const gzOnly = ['entities', 'facts', 'current_entities', 'events'];
    for (const file of manifest.files) {
      const stem = file.path.replace(/\.jsonl$/, '');
      const gz = file.path.endsWith('.jsonl') && gzOnly.includes(stem);
      expect(existsSync(path.join(dir, file.path)), file.path).toBe(!gz);
      expect(existsSync(path.join(dir, `${file.path}.gz`)), `${file.path}.gz`).toBe(gz);
    }
    const plainDir = path.join(work, 'plain');
    await writeBundle(plainDir, { scale: 1, seed: 7, gzipOnly: [], includeEvents: false, includeChainObjects: false });
    const names = await readdir(plainDir);
    expect(names.filter((name) => name.endsWith('.gz'))).toEqual([]);
    expect(names).not.toContain('events.jsonl');
    expect((await readManifest(plainDir)).files.map((file) => file.path)).toEqual(MANIFEST_ORDER.slice(0, -2));
  });

  it('has catalog counts, high-water marks and manifest row counts that agree with the files', async () => {
    const catalog = await readJson(dir, 'catalog.json');
    const count = (stem: string) => manifest.files.find((file) => file.path === `${stem}.jsonl`)!.rowCount;
    expect(catalog).toMatchObject({
      schemaVersion: 'registry.export.v1', generatedAt: manifest.generatedAt, entityCount: count('entities'), killmailCount: count('killmails'),
      sourceCount: count('sources'), factCount: count('facts'), relationCount: count('relations'), artefactCount: count('source_artefacts'),
      eventCount: count('events'), chainObjectCount: count('chain_objects'),
    });
    expect(catalog.files).toEqual(['catalog.json', 'manifest.json', ...MANIFEST_ORDER.slice(1)]);
    const keys: Record<string, [(row: BundleRow) => string, ((row: BundleRow) => string) | undefined]> = {
      entities: [(r) => r.id, (r) => r.updatedAt],
      killmails: [(r) => r.id, (r) => r.occurredAt],
      events: [(r) => r.id, (r) => r.occurredAt],
      sources: [(r) => r.id, (r) => r.createdAt],
      source_artefacts: [(r) => r.id, (r) => r.createdAt],
      facts: [(r) => `${r.entityId}:${r.key}:${r.sourceId}`, undefined],
      relations: [(r) => `${r.subjectEntityId}:${r.predicate}:${r.objectEntityId}:${r.sourceId}`, undefined],
      entity_sources: [(r) => `${r.entityId}:${r.source.id}`, undefined],
      current_entities: [(r) => `${r.entity.entityType}:${r.entity.id}`, (r) => r.entity.updatedAt],
      current_relations: [(r) => r.id, (r) => r.createdAt],
      chain_objects: [(r) => r.id, (r) => r.observedAt],
    };
    expect(Object.keys(manifest.highWaterMarks)).toEqual(Object.keys(keys).sort());
    for (const [stem, [id, time]] of Object.entries(keys)) {
      const list = rows[stem]!;
      const mark = manifest.highWaterMarks[stem]!;
      expect(mark.rowCount, stem).toBe(list.length);
      expect(mark.complete).toBe(true);
      expect(typeof mark.cursorOrder).toBe('string');
      expect(mark.firstId, stem).toBe(id(list[0]!));
      expect(mark.lastId, stem).toBe(id(list.at(-1)!));
      expect(mark.firstTime, stem).toBe(time?.(list[0]!));
      expect(mark.lastTime, stem).toBe(time?.(list.at(-1)!));
    }
  });

  it('passes the verifier shape check on every row', () => {
    const required: Record<string, string[]> = {
      entities: ['id', 'slug', 'entityType', 'name', 'environment'],
      killmails: ['id', 'environment', 'occurredAt', 'sourceIds'],
      sources: ['id', 'kind', 'title', 'locator'],
      events: ['id', 'kind', 'environment', 'occurredAt'],
      chain_objects: ['id', 'objectId', 'environment', 'typeRepr', 'observedAt'],
    };
    for (const [stem, fields] of Object.entries(required)) {
      expect(rows[stem]!.length, stem).toBeGreaterThan(0);
      for (const row of rows[stem]!) {
        for (const field of fields) {
          const value = row[field];
          const blank = value === undefined || value === null || (typeof value === 'string' && value.trim() === '') || (Array.isArray(value) && value.length === 0);
          expect(blank, `${stem} ${row.id} ${field}`).toBe(false);
        }
      }
    }
  });

  it('escapes <, >, & and U+2028/U+2029 as Go does, and writes one compact row per line', async () => {
    let escaped = 0;
    for (const file of manifest.files) {
      const text = (await uncompressed(dir, file.path)).toString('utf8');
      expect(/[<>&\u2028\u2029]/.test(text), file.path).toBe(false);
      escaped += (text.match(/\\u00(3c|3e|26)|\\u2028/g) ?? []).length;
      if (file.path.endsWith('.jsonl')) {
        const lines = text.split('\n');
        expect(lines.pop()).toBe('');
        for (const line of lines.slice(0, 50)) expect(line.startsWith('{') && !line.includes('": ')).toBe(true);
      }
    }
    expect(escaped).toBeGreaterThan(10);
  });
});

describe('orders and identity', () => {
  it('writes time-keyed files in their documented order, ties by id', () => {
    expectOrdered(rows.entities!, (r) => r.updatedAt, 'desc');
    expectOrdered(rows.killmails!, (r) => r.occurredAt, 'desc');
    expectOrdered(rows.events!, (r) => r.occurredAt, 'desc');
    expectOrdered(rows.sources!, (r) => r.createdAt, 'desc');
    expectOrdered(rows.source_artefacts!, (r) => r.createdAt, 'desc');
    expectOrdered(rows.chain_objects!, (r) => r.observedAt, 'asc');
  });

  it('groups facts by entity in entity order, keys sorted within an entity', () => {
    const position = new Map(rows.entities!.map((row, n) => [row.id as string, n]));
    let previous: BundleRow | undefined;
    for (const fact of rows.facts!) {
      expect(position.has(fact.entityId)).toBe(true);
      if (previous) {
        const step = position.get(fact.entityId)! - position.get(previous.entityId)!;
        expect(step >= 0).toBe(true);
        if (step === 0) expect(previous.key <= fact.key).toBe(true);
      }
      previous = fact;
    }
  });

  it('keeps ids and slugs unique, and every reference the format guarantees inside the bundle', () => {
    const ids = new Set(rows.entities!.map((row) => row.id));
    expect(ids.size).toBe(rows.entities!.length);
    expect(new Set(rows.entities!.map((row) => row.slug)).size).toBe(rows.entities!.length);
    for (const row of rows.entities!) expect(row.slug).toMatch(/^[a-z0-9-]{1,120}$/);
    for (const row of rows.entity_sources!) expect(ids.has(row.entityId)).toBe(true);
    for (const row of rows.current_entities!) expect(ids.has(row.entity.id)).toBe(true);
    for (const row of rows.relations!) expect(ids.has(row.subjectEntityId) || ids.has(row.objectEntityId)).toBe(true);
    for (const name of ['killmails', 'events', 'chain_objects', 'source_artefacts']) {
      expect(new Set(rows[name]!.map((row) => row.id)).size, name).toBe(rows[name]!.length);
    }
  });

  it('repeats a few fact, relation and entity_source keys (last row wins) and reports how many', () => {
    const repeats = (list: readonly BundleRow[], key: (row: BundleRow) => string) => list.length - new Set(list.map(key)).size;
    const facts = repeats(rows.facts!, (r) => `${r.entityId}|${r.key}|${r.sourceId}`);
    const relations = repeats(rows.relations!, (r) => `${r.subjectEntityId}|${r.predicate}|${r.objectEntityId}|${r.sourceId}`);
    const entitySources = repeats(rows.entity_sources!, (r) => `${r.entityId}|${r.source.id}`);
    expect(facts).toBeGreaterThan(0);
    expect(relations).toBeGreaterThan(0);
    expect(entitySources).toBeGreaterThan(0);
    expect(result.duplicateRows).toEqual({ facts, relations, entity_sources: entitySources });
    for (const list of [rows.entities!, rows.current_entities!, rows.current_relations!, rows.killmails!]) {
      expect(repeats(list, (r) => r.id ?? r.entity.id)).toBe(0);
    }
  });
});

describe('variety', () => {
  it('has every entity type, environment and cycle, and each typed collection in stillness and utopia', () => {
    const entities = rows.entities!;
    const types = new Set(entities.map((row) => row.entityType));
    expect(types.size).toBe(24);
    for (const [collection, type] of Object.entries(TYPED)) {
      for (const environment of ['stillness', 'utopia']) {
        expect(entities.some((row) => row.entityType === type && row.environment === environment), `${collection} ${environment}`).toBe(true);
      }
    }
    const environments = countBy(entities, (row) => row.environment);
    expect([...environments.keys()].sort()).toEqual(['stillness', 'unknown', 'utopia']);
    expect(environments.get('stillness')! / entities.length).toBeGreaterThan(0.85);
    const cycles = countBy(entities, (row) => String(row.cycle));
    expect([...cycles.keys()].sort()).toEqual(['5', '6', 'undefined']);
    for (const file of ['entities', 'facts', 'events', 'sources', 'source_artefacts']) {
      for (const row of rows[file]!) expect(row.cycle === undefined || (Number.isInteger(row.cycle) && row.cycle >= 1), file).toBe(true);
    }
    for (const file of ['killmails', 'relations', 'current_relations', 'chain_objects']) {
      expect(rows[file]!.some((row) => 'cycle' in row), file).toBe(false);
    }
    expect(entities.some((row) => row.id.split(':')[1] !== row.environment)).toBe(true);
  });

  it('has names with case variety, accents, CJK, emoji, duplicates, placeholders, and optional labels', () => {
    const names = rows.entities!.map((row) => row.name as string);
    expect(names).toContain('Zeta');
    expect(names).toContain('alpha');
    expect(names.some((name) => /[À-ž]/.test(name))).toBe(true);
    expect(names.some((name) => /[\u3040-\u30ff\u4e00-\u9fff]/.test(name))).toBe(true);
    expect(names.some((name) => /\p{Extended_Pictographic}/u.test(name))).toBe(true);
    expect([...countBy(names, (name) => name).values()].some((n) => n > 1)).toBe(true);
    expect(names.some((name) => /^Character \d{10}$/.test(name))).toBe(true);
    expect(names.some((name) => /^(Tribe|System) \d+$/.test(name))).toBe(true);
    for (const field of ['displayName', 'summary']) {
      expect(rows.entities!.some((row) => field in row)).toBe(true);
      expect(rows.entities!.some((row) => !(field in row))).toBe(true);
    }
  });

  it('has timestamps with 0-9 fraction digits, +10:00 offsets, exact ties and zero instants', () => {
    const times = [
      ...rows.entities!.map((r) => r.updatedAt), ...rows.events!.map((r) => r.occurredAt), ...rows.chain_objects!.map((r) => r.observedAt),
      ...rows.current_relations!.map((r) => r.createdAt), ...rows.facts!.filter((r) => r.publishedAt).map((r) => r.publishedAt),
    ] as string[];
    expect(new Set(times.map(fractionDigits))).toEqual(new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
    expect(rows.entities!.some((row) => row.updatedAt.endsWith('+10:00'))).toBe(true);
    const entityTimes = rows.entities!.map((row) => row.updatedAt as string);
    expect(entityTimes.some((text, n) => n > 0 && text > entityTimes[n - 1]!)).toBe(true); // text order ≠ instant order
    expect(entityTimes.some((text, n) => n > 0 && compareInstants(text, entityTimes[n - 1]!) === 0)).toBe(true);
    const killTimes = rows.killmails!.map((row) => row.occurredAt as string);
    expect(killTimes.some((text, n) => n > 0 && compareInstants(text, killTimes[n - 1]!) === 0)).toBe(true);
    expect(rows.facts!.some((row) => row.publishedAt === '0001-01-01T00:00:00Z')).toBe(true);
  });

  it('has all confidence labels and review statuses, and fact values whose type varies per key', () => {
    expect(new Set(rows.facts!.map((row) => row.confidence))).toEqual(new Set(['verified', 'probable', 'reported', 'stale', 'unknown']));
    expect(new Set(rows.facts!.map((row) => row.reviewStatus))).toEqual(new Set(['candidate', 'reviewed', 'published', 'rejected', 'superseded']));
    const tribeIds = rows.facts!.filter((row) => row.key === 'tribe_id').map((row) => typeof row.value);
    expect(new Set(tribeIds)).toEqual(new Set(['number', 'string']));
    const kinds = new Set<string>(rows.facts!.map((row) => (row.value === null ? 'null' : Array.isArray(row.value) ? 'array' : typeof row.value)));
    for (const kind of ['string', 'number', 'boolean', 'object', 'array', 'null']) expect(kinds.has(kind), kind).toBe(true);
    expect(rows.facts!.some((row) => row.cycle === undefined)).toBe(true);
    expect(rows.facts!.some((row) => 'sourceKind' in row)).toBe(false);
  });

  it('has relations without id over the documented predicates, and entity_sources wrappers', () => {
    expect(rows.relations!.some((row) => 'id' in row)).toBe(false);
    const predicates = new Set(rows.relations!.map((row) => row.predicate));
    for (const predicate of ['belongs_to', 'located_in', 'owned_by', 'killer', 'victim', 'occurred_in', 'reported_by', 'links_to', 'observed_between']) {
      expect(predicates.has(predicate), predicate).toBe(true);
    }
    const sourceIds = new Set(rows.sources!.map((row) => row.id));
    expect(rows.sources!.length).toBeGreaterThanOrEqual(10);
    expect(rows.source_artefacts!.length).toBe(30);
    for (const row of rows.entity_sources!) expect(Object.keys(row).filter((k) => k !== 'futureField')).toEqual(['entityId', 'source']);
    expect(rows.entity_sources!.some((row) => !sourceIds.has(row.source.id))).toBe(true);
  });

  it('has current rows for the 17 types in writer order, in utopia too, characters with and without evidence', () => {
    const current = rows.current_entities!;
    const typeOrder = current.map((row) => CURRENT_ORDER.indexOf(row.entity.entityType));
    expect(typeOrder.every((position, n) => position >= 0 && (n === 0 || position >= typeOrder[n - 1]!))).toBe(true);
    expect(new Set(current.map((row) => row.entity.entityType)).size).toBe(17);
    expect(current.some((row) => row.entity.environment === 'utopia')).toBe(true);
    for (const row of current) {
      expect(typeof row.facts === 'object' && !Array.isArray(row.facts)).toBe(true);
      expect(row.entity.environment).not.toBe('unknown');
    }
    const characters = current.filter((row) => row.entity.entityType === 'character');
    expect(characters.some((row) => 'source_event_kind' in row.facts)).toBe(true);
    expect(characters.some((row) => !('source_event_kind' in row.facts))).toBe(true);
    expect(current.some((row) => (row.incomingRelations?.length ?? 0) > 0 && row.derived)).toBe(true);
    const relations = rows.current_relations!;
    expect(new Set(relations.map((row) => row.predicate))).toEqual(new Set(['owned_by', 'links_to', 'observed_between']));
    const firstOther = relations.findIndex((row) => row.predicate !== 'owned_by');
    expect(relations.slice(firstOther).some((row) => row.predicate === 'owned_by')).toBe(false);
    for (const row of relations) expect(row.id).toBe(`relation:${row.subjectEntityId}:${row.predicate}:${row.objectEntityId}:${row.sourceId}`);
  });

  it('has NPC killers by type id and by relation only, player killers, a misleading raw killer_id and unresolved actors', () => {
    const killmails = rows.killmails!;
    const enemies = new Set(rows.entities!.filter((row) => row.entityType === 'enemy').map((row) => row.id));
    const byType = killmails.filter((row) => row.killerTypeId);
    expect(byType.length / killmails.length).toBeGreaterThan(0.1);
    for (const row of byType) {
      expect(row.killer.isNpc).toBe(true);
      if (row.killer.entityId) expect(row.killer.entityId).toBe(`enemy:${row.environment}:type:${row.killerTypeId}`);
    }
    const killerRelations = new Map(rows.relations!.filter((r) => r.predicate === 'killer').map((r) => [r.subjectEntityId, r.objectEntityId]));
    const viaRelation = killmails.filter((row) => !row.killerTypeId && row.killer.isNpc);
    expect(viaRelation.length).toBeGreaterThan(0);
    for (const row of viaRelation) {
      expect(enemies.has(killerRelations.get(row.id))).toBe(true);
      expect(killerRelations.get(row.id)).toBe(row.killer.entityId);
    }
    const players = killmails.filter((row) => row.killerCharacterId && row.raw?.event?.json?.killer_id);
    expect(players.length).toBeGreaterThan(0);
    const enemyTypeIds = new Set([...enemies].map((id) => id.split(':').at(-1)));
    const misleading = killmails.filter((row) => enemyTypeIds.has(row.raw?.event?.json?.killer_id?.item_id));
    expect(misleading.length).toBeGreaterThan(0);
    for (const row of misleading) {
      expect(row.killerTypeId).toBeUndefined();
      expect(row.killer.entityType).toBe('character');
      expect(row.killer.isNpc).toBeUndefined();
    }
    const unresolved = killmails.filter((row) => [row.victim, row.killer, row.system].some((v) => v.entityType === 'unknown' && v.displayName === 'Unknown'));
    expect(unresolved.length).toBeGreaterThan(0);
    expect(new Set(killmails.map((row) => cycleWindow(row.occurredAt)))).toEqual(new Set([6, 5, 0]));
    expect(killmails.some((row) => row.reporterCharacterId)).toBe(true);
    expect(killmails.some((row) => row.raw) && killmails.some((row) => !row.raw)).toBe(true);
  });

  it('has events in both cycle windows and before, with and without cycle, and the events other rows cite', () => {
    const events = rows.events!;
    expect(new Set(events.map((row) => cycleWindow(row.occurredAt)))).toEqual(new Set([6, 5, 0]));
    expect(events.some((row) => row.cycle === 6) && events.some((row) => row.cycle === 5) && events.some((row) => row.cycle === undefined)).toBe(true);
    expect(events.some((row) => row.cycle === undefined && cycleWindow(row.occurredAt) === 6)).toBe(true);
    for (const row of events) {
      expect(row.payload).toBeTypeOf('object');
      if (row.cycle !== undefined) expect(row.cycle).toBe(cycleWindow(row.occurredAt));
    }
    expect(events.some((row) => !row.sourceId)).toBe(true);
    const byId = new Map(events.map((row) => [row.id, row]));
    for (const row of rows.killmails!.filter((r) => r.raw && r.id.split(':')[1] === r.environment)) {
      const event = byId.get(row.raw.sourceEventId);
      expect(event?.kind, row.id).toBe('killmail.created');
      expect(event?.occurredAt).toBe(row.occurredAt);
    }
    const cited = rows.facts!.filter((row) => row.key === 'source_event_id' && row.entityId.startsWith('character:'));
    expect(cited.length).toBeGreaterThan(0);
    for (const fact of cited) expect(byId.get(fact.value)?.kind).toBe('character.created');
  });

  it('has the four ops documents in their shapes', async () => {
    const coverage = await readJson(dir, 'ops_chain_coverage.json');
    expect(Array.isArray(coverage.data)).toBe(false);
    expect(coverage.data.targetCount).toBe(coverage.data.targets.length);
    for (const name of ['ops_freshness.json', 'ops_cursors.json', 'ops_source_gaps.json']) {
      expect(Array.isArray((await readJson(dir, name)).data), name).toBe(true);
    }
    const gaps = (await readJson(dir, 'ops_source_gaps.json')).data as BundleRow[];
    expect(new Set(gaps.map((gap) => gap.severity))).toEqual(new Set(['actionable', 'info', 'none']));
    expect(gaps.some((gap) => gap.environment === 'utopia')).toBe(true);
    const unresolved = gaps.find((gap) => gap.id === 'source-gap:stillness:unresolved-killmail-actors');
    const expected = rows.killmails!.filter((row) => row.environment === 'stillness' && [row.victim, row.killer, row.system].some((v) => v.entityType === 'unknown')).length;
    expect(unresolved?.count).toBe(expected);
  });

  it('carries an unknown extra field in most row files', () => {
    const withFuture = Object.entries(rows).filter(([, list]) => list.some((row) => 'futureField' in row)).map(([name]) => name);
    expect(withFuture.sort()).toEqual(Object.keys(rows).sort());
  });
});
