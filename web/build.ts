/**
 * Builds the explorer (/explorer/) and the API reference (/docs/) with Vite into web/dist,
 * each page with its own base so every asset URL is absolute under it and carries a content
 * hash (the gateway caches those for a year). Prints each page's files with their raw and
 * gzip sizes and writes them to web/dist/sizes.json.
 *
 * Runs from `npm run build:web` and from `prepare` (so `npm ci` builds it); the browser tests
 * build again before they start, so they never test stale files.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));
export const DIST = path.join(here, 'dist');
const PAGES = ['explorer', 'docs'] as const;

export interface FileSize {
  file: string;
  bytes: number;
  gzip: number;
}

/** Builds both pages; returns the files of each with their sizes. */
export async function buildWeb(options: { quiet?: boolean } = {}): Promise<Record<string, FileSize[]>> {
  const sizes: Record<string, FileSize[]> = {};
  for (const page of PAGES) {
    await build({
      configFile: false,
      root: path.join(here, page),
      base: `/${page}/`,
      logLevel: options.quiet ? 'error' : 'warn',
      oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
      build: {
        outDir: path.join(DIST, page),
        emptyOutDir: true,
        target: 'es2022',
        // One file per page is the point of the bundle; Swagger UI alone is ~1.4 MB.
        chunkSizeWarningLimit: 2_000,
        reportCompressedSize: false,
        // Swagger UI's 180 KB stylesheet makes the CSS transform the slowest step; that is expected.
        rolldownOptions: { checks: { bundlerTimings: false } },
      },
    });
    sizes[page] = await sizesOf(path.join(DIST, page));
  }
  await writeFile(path.join(DIST, 'sizes.json'), `${JSON.stringify(sizes, null, 2)}\n`);
  return sizes;
}

async function sizesOf(dir: string): Promise<FileSize[]> {
  const files = (await readdir(dir, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile());
  const out: FileSize[] = [];
  for (const entry of files) {
    const full = path.join(entry.parentPath, entry.name);
    const bytes = await readFile(full);
    out.push({ file: path.relative(dir, full), bytes: bytes.length, gzip: gzipSync(bytes).length });
  }
  return out.sort((a, b) => a.file.localeCompare(b.file));
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const sizes = await buildWeb();
  for (const [page, files] of Object.entries(sizes)) {
    const total = files.reduce((sum, f) => ({ bytes: sum.bytes + f.bytes, gzip: sum.gzip + f.gzip }), { bytes: 0, gzip: 0 });
    console.log(`/${page}/: ${files.length} files, ${kb(total.bytes)} (${kb(total.gzip)} gzip)`);
    for (const f of files) console.log(`  ${f.file.padEnd(40)} ${kb(f.bytes).padStart(10)} ${kb(f.gzip).padStart(10)} gzip`);
  }
  console.log(`built web/dist in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
