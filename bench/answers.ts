/**
 * `node bench/answers.ts <gateway url> <out.json>`: every answer of a fixed set of list requests
 * (routes × filters × sorts × limits, each first page asked twice, and the cursors of each walked
 * a few pages), written as `request → status and body`. Run against two builds of the gateway on
 * the same loaded generation (same `CURSOR_SECRET`), the two files must be equal: a change meant
 * to cost Elasticsearch less changed no answer. Ids for filters are taken from the answers
 * themselves, so the set is the same for the same data.
 */
import { writeFile } from 'node:fs/promises';

const [base, out] = process.argv.slice(2);
if (!base || !out) throw new Error('usage: node bench/answers.ts <gateway url> <out.json>');

/** Pages walked after each first page, at most. */
const WALK = 4;
const answers: Record<string, { status: number; body: string }> = {};

async function ask(path: string): Promise<{ status: number; json: any }> {
  const response = await fetch(`${base}${path}`);
  const body = await response.text();
  // The same request asked again (the second time, counts may come from what the first learnt) is kept apart.
  let key = path;
  for (let n = 2; answers[key] !== undefined; n += 1) key = `${path} #${n}`;
  answers[key] = { status: response.status, body };
  let json: any;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  return { status: response.status, json };
}

/** A first page twice, then its cursor walked. */
async function walk(path: string): Promise<any> {
  const first = await ask(path);
  await ask(path);
  let next = first.json?.nextCursor as string | undefined;
  for (let page = 0; page < WALK && next; page += 1) {
    const separator = path.includes('?') ? '&' : '?';
    next = (await ask(`${path}${separator}cursor=${encodeURIComponent(next)}`)).json?.nextCursor;
  }
  return first.json;
}

const values = (rows: any[] | undefined, field: string) => [...new Set((rows ?? []).map((r) => r?.[field]).filter((v) => typeof v === 'string'))] as string[];

const events = await walk('/v1/events?limit=50');
const [kind, kind2] = values(events?.data, 'kind');
const [module] = values(events?.data, 'module');
const [packageId] = values(events?.data, 'packageId');
const [eventId, eventId2] = values(events?.data, 'id');
const eventPaths = [
  '/v1/events',
  '/v1/events?limit=1',
  '/v1/events?limit=10',
  '/v1/events?limit=200',
  '/v1/events?limit=10&sort=occurredAt:asc',
  '/v1/events?limit=10&sort=indexedAt:asc',
  '/v1/events?limit=10&sort=indexedAt:desc',
  '/v1/events?limit=20&cycles=all',
  '/v1/events?limit=20&environment=utopia',
  `/v1/events?limit=20&kind=${kind}`,
  `/v1/events?limit=20&kind=${kind}|${kind2}&sort=occurredAt:asc`,
  `/v1/events?limit=20&module=${module}`,
  `/v1/events?limit=20&package_id=${packageId}&module=${module}`,
  `/v1/events?limit=20&id=${encodeURIComponent(`${eventId}|${eventId2}|event:missing`)}`,
  '/v1/events?limit=20&since=2026-03-01T00:00:00Z&until=2026-05-01T00:00:00Z',
  '/v1/events?limit=20&since=2026-03-01T00:00:00Z&sort=occurredAt:asc',
  '/v1/events?limit=20&since_indexed=2020-01-01T00:00:00Z&sort=indexedAt:asc',
  `/v1/events?limit=20&q=${kind?.split('.')[0]}`,
  '/v1/events?limit=20&select=kind,occurredAt',
  '/v1/events?group_by=kind',
];
for (const p of eventPaths) await walk(p);

const killmails = await walk('/v1/killmails?limit=50');
const [system] = values(killmails?.data, 'systemId');
const [reporter] = values(killmails?.data, 'reporterCharacterId');
const [victim] = values(killmails?.data, 'victimCharacterId');
const killmailPaths = [
  '/v1/killmails',
  '/v1/killmails?limit=5',
  '/v1/killmails?limit=10&sort=occurredAt:asc',
  '/v1/killmails?limit=10&sort=indexedAt:asc',
  '/v1/killmails?limit=10&cycles=all',
  `/v1/killmails?limit=10&system=${system}`,
  `/v1/killmails?limit=10&reporter=${reporter}`,
  `/v1/killmails?limit=10&victim=${victim}`,
  `/v1/killmails?limit=10&involved=${reporter}`,
  `/v1/killmails?limit=10&involved=${reporter}&side=kills`,
  '/v1/killmails?limit=10&npc=true',
  '/v1/killmails?limit=10&npc=false&sort=occurredAt:asc',
  '/v1/killmails?limit=10&since=2026-03-01T00:00:00Z',
  '/v1/killmails?limit=10&select=systemName',
];
for (const p of killmailPaths) await walk(p);

const entities = await walk('/v1/entities?limit=50');
const [name] = values(entities?.data, 'name');
for (const p of [
  '/v1/entities?limit=10&type=character',
  '/v1/entities?limit=10&cycles=all',
  '/v1/entities?limit=5&updated_since=2026-03-01T00:00:00Z',
  `/v1/search?q=${encodeURIComponent(name ?? 'gate')}&limit=10`,
  '/v1/search?q=gate&limit=10',
  '/v1/search?q=xyzzy-nothing',
  '/v1/sources',
  '/v1/sources?limit=3',
  '/v1/current/systems?limit=20',
  '/v1/current/characters?limit=20',
  '/v1/types?limit=10',
]) {
  await walk(p);
}

await writeFile(out, `${JSON.stringify(answers, null, 1)}\n`);
console.error(`${Object.keys(answers).length} answers written to ${out}`);
