/**
 * The checks `npm run compose:check -- --profile cluster` runs once the profile is up
 * (scripts/compose-check.sh starts it): the Elasticsearch cluster green with one replica of every
 * index, a client's budget shared by both gateways through Valkey, and one Elasticsearch
 * container killed while reads go on through both gateways, with no 5xx and no dropped request.
 *
 * `node scripts/compose-cluster-checks.ts <gateway URL> <gateway URL> <es container> <es container to kill> <budget> <key>…`
 * (the keys are API_KEYS of the gateways: the first is spent by the budget check, the others
 * read while the node dies). Prints one line per check; exits 1 if any failed.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const [gatewayA, gatewayB, esContainer, victim, budgetText, budgetKey, ...readKeys] = process.argv.slice(2);
if (!gatewayA || !gatewayB || !esContainer || !victim || !budgetText || !budgetKey || readKeys.length === 0) {
  console.error('usage: compose-cluster-checks.ts <gateway> <gateway> <es container> <es container to kill> <budget> <key> <key>…');
  process.exit(2);
}
const gateways = [gatewayA, gatewayB];
const budget = Number(budgetText);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let failures = 0;
const report = (ok: boolean, what: string) => {
  console.error(`compose-check: ${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures += 1;
};

/** Elasticsearch as seen from inside one of its containers (the profile publishes no ES port). */
async function es<T>(path: string): Promise<T> {
  const { stdout } = await run('podman', ['exec', esContainer!, 'curl', '-fsS', `http://localhost:9200${path}`]);
  return JSON.parse(stdout) as T;
}

/** A GET through a gateway as the client of `key`: its status, or the network error's code. */
async function get(gateway: string, path: string, key: string): Promise<number | string> {
  try {
    const response = await fetch(`${gateway}${path}`, { headers: { 'X-Api-Key': key }, signal: AbortSignal.timeout(15_000) });
    await response.arrayBuffer();
    return response.status;
  } catch (error) {
    return (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
  }
}

const tally = (answers: (number | string)[]) => answers.reduce<Record<string, number>>((m, a) => ((m[a] = (m[a] ?? 0) + 1), m), {});

// 1. Three nodes, green, every index of the registry with one replica (a load waits for them).
type Health = { status: string; number_of_nodes: number };
let health = await es<Health>('/_cluster/health');
for (let i = 0; i < 60 && health.status !== 'green'; i += 1) {
  await sleep(2000);
  health = await es<Health>('/_cluster/health');
}
const indices = await es<{ index: string; rep: string; health: string }[]>('/_cat/indices/registry*?format=json&h=index,rep,health');
const loose = indices.filter((index) => index.rep !== '1' || index.health !== 'green');
report(health.number_of_nodes === 3 && health.status === 'green' && indices.length > 0 && loose.length === 0, `cluster: ${health.number_of_nodes} nodes, ${health.status}, ${indices.length} indices each with 1 replica${loose.length ? ` (not: ${loose.map((i) => `${i.index} rep ${i.rep} ${i.health}`).join(', ')})` : ''}`);

// 2. One budget across both gateways: 1.5 windows' worth of 1-point reads, alternating gateways,
//    get exactly one window's points in 200s (each gateway on its own would allow twice that).
const spent: (number | string)[] = [];
for (let i = 0; i < budget * 1.5; i += 1) spent.push(await get(gateways[i % 2]!, '/v1/ops/freshness', budgetKey));
const counts = tally(spent);
report(counts['200'] === budget && counts['429'] === budget / 2, `budget shared by both gateways: ${JSON.stringify(counts)} for ${budget * 1.5} requests, budget ${budget}`);

// 3. Reads through both gateways while one Elasticsearch container is killed.
const paths = ['/v1/entities?limit=5', '/v1/killmails?limit=5', '/v1/events?limit=5&cycles=all', '/v1/search?q=a&limit=5'];
const answers: (number | string)[] = [];
let reading = true;
const readers = readKeys.map(async (key, r) => {
  for (let i = 0; reading; i += 1) {
    answers.push(await get(gateways[(i + r) % 2]!, paths[i % paths.length]!, key));
    await sleep(200);
  }
});
await sleep(5000);
const before = answers.length;
await run('podman', ['kill', victim]);
console.error(`compose-check: killed ${victim} after ${before} reads`);
await sleep(30_000);
reading = false;
await Promise.all(readers);
const read = tally(answers);
const bad = Object.keys(read).filter((status) => status !== '200');
report(bad.length === 0 && answers.length > before, `reads while ${victim} was killed: ${JSON.stringify(read)} (${answers.length - before} after the kill)`);
health = await es<Health>('/_cluster/health');
console.error(`compose-check: cluster after the kill: ${health.number_of_nodes} nodes, ${health.status}`);

process.exit(failures > 0 ? 1 : 0);
