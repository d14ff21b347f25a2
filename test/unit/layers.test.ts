/**
 * The architecture the folders promise, checked on the import statements themselves: the pure
 * query builders know no HTTP layer, no Koa and no client; only src/search talks to
 * Elasticsearch; the index descriptions are shared by loader and gateway and know neither; the
 * object store client (src/store) is shared too, and the gateway never reaches into loader/.
 * Around the product, arrows run one way: the harness (processes started and read) serves
 * tests, benchmarks and scripts and imports none of them; scripts import no benchmark or test,
 * benchmarks no test.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');

function sources(dir: string): string[] {
  return readdirSync(path.join(SRC, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(SRC, dir, f));
}

/** Every module an import or export statement names (type-only imports included). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'([^']+)'/gm)].map((m) => {
    const target = m[1]!;
    return target.startsWith('.') ? path.relative(SRC, path.resolve(path.dirname(file), target)) : target;
  });
}

function offending(dir: string, forbidden: (target: string) => boolean): string[] {
  return sources(dir).flatMap((file) => importsOf(file).filter(forbidden).map((target) => `${path.relative(SRC, file)} → ${target}`));
}

describe('layers', () => {
  it('finds the imports it checks (the check itself works)', () => {
    expect(importsOf(path.join(SRC, 'query', 'parameters.ts'))).toContain('errors.ts');
  });

  it('src/query imports nothing of src/http, src/routes, src/search, Koa or the client runtime', () => {
    expect(offending('query', (t) => /^(http|routes|search)\//.test(t) || /^(koa|@koa\/)/.test(t))).toEqual([]);
    // Types of the client describe request bodies; its runtime (a Client) must not be reached.
    const runtime = sources('query').filter((f) => /^import\s+\{[^}]*\}\s+from\s+'@elastic\/elasticsearch'/m.test(readFileSync(f, 'utf8')));
    expect(runtime).toEqual([]);
  });

  it('the error class belongs to no layer: src/errors.ts imports nothing', () => {
    expect(importsOf(path.join(SRC, 'errors.ts'))).toEqual([]);
  });

  it('src/indices knows neither the HTTP layer nor the routes nor the search boundary', () => {
    expect(offending('indices', (t) => /^(http|routes|search|query)\//.test(t) || /^(koa|@koa\/)/.test(t))).toEqual([]);
  });

  it('src/store (the object store client of loader and gateway) knows no HTTP layer, route, query, index or search', () => {
    expect(offending('store', (t) => /^(http|routes|search|query|indices)\//.test(t) || /^(koa|@koa\/|@elastic\/)/.test(t))).toEqual([]);
  });

  it('the HTTP layer (src/http) never reaches up into the routes: src/app.ts assembles the two', () => {
    expect(offending('http', (t) => t.startsWith('routes/') || t === 'app.ts' || t === 'server.ts')).toEqual([]);
  });

  it('the HTTP layer (src/http) never reaches into the search boundary: who is refused is src/limits', () => {
    expect(offending('http', (t) => t.startsWith('search/'))).toEqual([]);
  });

  it('src/limits (who a client is, what it may spend) knows no HTTP layer, route, search, query, Koa or client', () => {
    expect(offending('limits', (t) => /^(http|routes|search|query|stream|workers)\//.test(t) || /^(koa|@koa\/|@elastic\/)/.test(t))).toEqual([]);
  });

  it('the instant parser (src/time) is for everyone and imports nothing of the project', () => {
    expect(sources('time').flatMap((file) => importsOf(file).filter((t) => !t.startsWith('node:')))).toEqual([]);
  });

  it('the gateway never imports the loader', () => {
    expect(offending('.', (t) => t.startsWith('../loader/'))).toEqual([]);
  });

  it('product code (src/, loader/) never imports harness/, scripts/, bench/, test/, generator/ or packages/', () => {
    const devOnly = (t: string) => /^\.\.\/(harness|scripts|bench|test|generator|packages)\//.test(t);
    expect(offending('.', devOnly)).toEqual([]);
    expect(offending('../loader', devOnly)).toEqual([]);
    // The check reads files outside src/ too: the benchmark does import the loader and scripts.
    expect(offending('../bench', devOnly).length).toBeGreaterThan(0);
  });
});

describe('layers around the product', () => {
  it('finds the arrows it checks (the check reads scripts/ and harness/)', () => {
    expect(offending('../scripts', (t) => t.startsWith('../harness/')).length).toBeGreaterThan(0);
    expect(offending('../harness', (t) => t === 'config.ts').length).toBeGreaterThan(0);
  });

  it('scripts/ imports nothing of bench/ or test/: what both use lives in harness/', () => {
    expect(offending('../scripts', (t) => /^\.\.\/(bench|test)\//.test(t))).toEqual([]);
  });

  it('a published package (packages/*) reaches nothing of this repository outside its own folder: the others by their name', () => {
    for (const name of ['client', 'testcontainers']) {
      expect(offending(`../packages/${name}/src`, (t) => t.startsWith('../') && !t.startsWith(`../packages/${name}/src/`))).toEqual([]);
    }
    expect(importsOf(path.join(SRC, '../packages/testcontainers/src/index.ts'))).toContain('@registry-gateway/client');
  });

  it('bench/ imports nothing of test/: fixtures both use live in harness/ or generator/', () => {
    expect(offending('../bench', (t) => t.startsWith('../test/'))).toEqual([]);
  });

  it('the harness imports nothing of scripts/, bench/ or test/, its users', () => {
    expect(offending('../harness', (t) => /^\.\.\/(scripts|bench|test)\//.test(t))).toEqual([]);
  });
});

/** The import circles among the TypeScript files under `dirs` (paths relative to the project), each once, as `a → b → a`. */
function circles(dirs: string[]): string[] {
  const root = path.resolve(SRC, '..');
  const files = dirs.flatMap((dir) => sources(path.relative(SRC, path.join(root, dir))));
  const edges = new Map(
    files.map((file) => [
      path.relative(root, file),
      importsOf(file)
        .filter((t) => t.endsWith('.ts') && !t.startsWith('node:'))
        .map((t) => path.relative(root, path.resolve(SRC, t))),
    ]),
  );
  const found = new Set<string>();
  const state = new Map<string, 'open' | 'done'>();
  const walk = (file: string, trail: string[]) => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      const loop = trail.slice(trail.indexOf(file));
      // One spelling per circle, whichever file the walk entered it by.
      const start = loop.indexOf([...loop].sort()[0]!);
      found.add([...loop.slice(start), ...loop.slice(0, start), loop[start]].join(' → '));
      return;
    }
    state.set(file, 'open');
    for (const next of edges.get(file) ?? []) if (edges.has(next)) walk(next, [...trail, file]);
    state.set(file, 'done');
  };
  for (const file of edges.keys()) walk(file, []);
  return [...found];
}

describe('no import circles', () => {
  it('finds a circle where there is one (the check itself works)', () => {
    expect(circles(['test/fixtures/import-circle'])).toEqual(['test/fixtures/import-circle/a.ts → test/fixtures/import-circle/b.ts → test/fixtures/import-circle/a.ts']);
  });

  it('src/, loader/ and generator/ import nothing that imports them back, however far round', () => {
    expect(circles(['src', 'loader', 'generator'])).toEqual([]);
  });

  it('nor do the harness, scripts, benchmarks and tests', () => {
    const found = circles(['src', 'loader', 'generator', 'harness', 'scripts', 'bench', 'test', 'packages/client/src', 'packages/testcontainers/src']);
    // The fixture's circle is the one the first case plants.
    expect(found.filter((circle) => !circle.startsWith('test/fixtures/import-circle/'))).toEqual([]);
  });
});
