/**
 * schemathesis' configuration for `npm run fuzz`: real identifiers of the served bundle as
 * dictionaries, from which each path parameter that names a record is drawn half the time (random
 * the other half). With random identifiers alone every positive case of such a route is a 404 —
 * or a 400 where it breaks a rule between parameters (`select` with `group_by`, a cursor that is
 * not one) — so the fuzzer never reaches the route's logic, and schemathesis warns of missing test
 * data and of a schema mismatch that is not one.
 */
import { TYPED_COLLECTIONS } from '../src/indices/collections.ts';
import { ACTIVITY_KINDS } from '../src/query/activity.ts';
import { readRows } from '../generator/read-bundle.ts';

/** Identifiers per dictionary: enough to vary, few enough to keep the file small. */
const PER_DICTIONARY = 20;

/** Routes whose path parameter names a record of one bundle file (the detail routes). */
const RECORD_ROUTES = [
  { dictionary: 'events', file: 'events.jsonl', paths: ['/v1/events/{id}'] },
  { dictionary: 'killmails', file: 'killmails.jsonl', paths: ['/v1/killmails/{id}', '/v1/killmails/{id}/raw'] },
  { dictionary: 'sources', file: 'sources.jsonl', paths: ['/v1/sources/{id}'] },
  { dictionary: 'artefacts', file: 'source_artefacts.jsonl', paths: ['/v1/artefacts/{id}'] },
  { dictionary: 'chain-objects', file: 'chain_objects.jsonl', paths: ['/v1/chain-objects/{id}'] },
] as const;

/** The entity routes of any type (activity: of the kinds that keep it, a 400 for the others). */
const ENTITY_PATHS = ['', '/facts', '/relations', '/sources', '/history'].map((tail) => `/v1/entities/{idOrSlug}${tail}`);
const ACTIVITY_PATH = '/v1/entities/{idOrSlug}/activity';

async function firstIds(bundleDir: string, file: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const { row } of readRows(bundleDir, file)) {
    ids.push(String(row.id));
    if (ids.length === PER_DICTIONARY) break;
  }
  return ids;
}

/** Entities' ids and slugs: of any type, of the kinds that keep activity, and by typed collection. */
async function entityIds(bundleDir: string): Promise<Map<string, string[]>> {
  const byType = new Map<string, string[]>();
  const any: string[] = [];
  for await (const { row } of readRows(bundleDir, 'entities.jsonl')) {
    const names = [String(row.id), ...(row.slug ? [String(row.slug)] : [])];
    const type = String(row.entityType);
    if (!byType.has(type)) byType.set(type, []);
    const ofType = byType.get(type)!;
    if (ofType.length < PER_DICTIONARY) ofType.push(...names);
    if (any.length < PER_DICTIONARY) any.push(...names);
  }
  const active = ACTIVITY_KINDS.flatMap((kind) => byType.get(kind) ?? []);
  const dictionaries = new Map([['entities', any], ['active-entities', active]]);
  for (const [collection, entityType] of Object.entries(TYPED_COLLECTIONS)) {
    const ids = byType.get(entityType);
    if (ids) dictionaries.set(collection, ids);
  }
  return dictionaries;
}

/** The configuration file's text (TOML: JSON strings are TOML basic strings). */
export async function fuzzConfig(bundleDir: string): Promise<string> {
  const dictionaries = await entityIds(bundleDir);
  const bindings: { dictionary: string; path: string; parameter: string }[] = ENTITY_PATHS.map((path) => ({ dictionary: 'entities', path, parameter: 'idOrSlug' }));
  bindings.push({ dictionary: 'active-entities', path: ACTIVITY_PATH, parameter: 'idOrSlug' });
  for (const collection of Object.keys(TYPED_COLLECTIONS)) {
    if (dictionaries.has(collection)) bindings.push({ dictionary: collection, path: `/v1/${collection}/{idOrSlug}`, parameter: 'idOrSlug' });
  }
  for (const { dictionary, file, paths } of RECORD_ROUTES) {
    const ids = await firstIds(bundleDir, file);
    if (ids.length === 0) continue;
    dictionaries.set(dictionary, ids);
    for (const path of paths) bindings.push({ dictionary, path, parameter: 'id' });
  }
  const lines: string[] = [];
  for (const [name, values] of dictionaries) lines.push(`[dictionaries.${JSON.stringify(name)}]`, `values = ${JSON.stringify(values)}`, '');
  for (const { dictionary, path, parameter } of bindings) {
    lines.push('[[operations]]', `include-path = ${JSON.stringify(path)}`, `parameters = { ${JSON.stringify(`path.${parameter}`)} = { dictionary = ${JSON.stringify(dictionary)}, probability = 0.5 } }`, '');
  }
  return lines.join('\n');
}
