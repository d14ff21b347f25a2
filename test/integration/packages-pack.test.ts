/**
 * The packages as their users get them: `npm pack` in packages/client and packages/testcontainers
 * (each builds its dist/), both tarballs installed into a scratch project outside this
 * repository; there the first call of the client's README — its five lines as written, the
 * gateway's address put in — runs against a real gateway and prints the bundle's killmails, and
 * the Testcontainers module imports by its name (its run needs a container engine:
 * testcontainers-module.test.ts).
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readAllRows } from '../../generator/read-bundle.ts';
import { PROJECT_ROOT } from '../../src/config.ts';
import { lastWins, newestFirst } from '../support/expect.ts';
import { type TestGateway, startTestGateway } from '../support/gateway.ts';

const PACKAGES = path.join(PROJECT_ROOT, 'packages');
let gw: TestGateway;
let scratch: string;

beforeAll(async () => {
  gw = await startTestGateway({ name: 'client-pack', scale: 1, seed: 63 });
  scratch = await mkdtemp(path.join(tmpdir(), 'client-scratch-'));
}, 120_000);

afterAll(async () => {
  await gw?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** The README's first code block. */
async function firstCall(): Promise<string> {
  const readme = await readFile(path.join(PACKAGES, 'client', 'README.md'), 'utf8');
  return /```js\n([\s\S]*?)```/.exec(readme)![1]!;
}

it('packs both, installs them into a project of its own, and the client README’s first call runs there', async () => {
  const npm = (args: string[], cwd: string) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 });
  // The client first: the module's build reads its types.
  for (const name of ['client', 'testcontainers']) npm(['pack', '--pack-destination', scratch, '--silent'], path.join(PACKAGES, name));
  const tarballs = (await readdir(scratch)).filter((f) => f.endsWith('.tgz')).sort();
  expect(tarballs).toEqual([expect.stringMatching(/^registry-gateway-client-\d+\.\d+\.\d+\.tgz$/), expect.stringMatching(/^registry-gateway-testcontainers-\d+\.\d+\.\d+\.tgz$/)]);
  await writeFile(path.join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
  npm(['install', ...tarballs.map((t) => `./${t}`), '--no-audit', '--no-fund', '--prefer-offline', '--silent'], scratch);
  const module = execFileSync(process.execPath, ['--input-type=module', '-e', "const m = await import('@registry-gateway/testcontainers'); console.log(typeof m.RegistryGatewayContainer, typeof new m.RegistryGatewayContainer().withSampleBundle, m.ELASTICSEARCH_IMAGE)"], { cwd: scratch, encoding: 'utf8' });
  expect(module.trim()).toMatch(/^function function docker\.elastic\.co\/elasticsearch\/elasticsearch:8\.19\.\d+$/);

  const code = await firstCall();
  expect(code.trim().split('\n')).toHaveLength(5);
  await writeFile(path.join(scratch, 'first-call.mjs'), code.replace('http://localhost:8080', gw.url));
  // The same lines type-check as TypeScript against the packages' declarations, as a TypeScript user compiles them.
  await writeFile(path.join(scratch, 'first-call.ts'), code);
  const compilerOptions = { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022', 'dom'], types: [], strict: true, noEmit: true };
  await writeFile(path.join(scratch, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['first-call.ts'] }));
  execFileSync(process.execPath, [path.join(PROJECT_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', scratch], { encoding: 'utf8' });
  // Not a blocking spawn: the gateway answers from this very process.
  const printed = (await promisify(execFile)(process.execPath, ['first-call.mjs'], { cwd: scratch, encoding: 'utf8', timeout: 60_000 })).stdout.trim().split('\n');

  const killmails = newestFirst(lastWins(await readAllRows(gw.bundleDir, 'killmails.jsonl'), (r) => r.id).filter((r) => r.environment === 'stillness'), (r) => r.occurredAt, (r) => r.id);
  expect(printed[0]).toBe(`${killmails.length} killmails, the newest ${killmails[0]!.id}`);
  expect(printed.slice(1)).toEqual(killmails.map((r) => r.id));
}, 240_000);
