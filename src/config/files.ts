/**
 * Where files are: the bundle `npm start` serves, the copies and line indices generations keep,
 * and the cache of the development Elasticsearch and the sample bundle.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Parse } from './parse.ts';
import { type Setting, read, section } from './setting.ts';

/** The project root, so paths work whatever the working directory is. */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A path relative to the project root. */
const underRoot: Parse<string> = (raw) => path.resolve(PROJECT_ROOT, raw);

const cacheDir: Setting<string> = {
  env: 'CACHE_DIR',
  default: '.cache',
  parse: underRoot,
  meaning: 'Elasticsearch distribution, data and logs; the sample bundle',
  // The loader reads it as DATA_DIR's default.
  readBy: ['elasticsearch', 'start', 'loader'],
};

export const files = section({
  bundleDir: {
    env: 'BUNDLE_DIR',
    documented: 'the generated sample',
    // npm runs scripts in the project root; a relative BUNDLE_DIR means the caller's directory.
    parse: (raw, _name, env) => path.resolve(env.INIT_CWD ?? process.cwd(), raw),
    meaning: 'bundle `npm start` loads and serves',
    readBy: ['start'],
  },
  dataDir: {
    env: 'DATA_DIR',
    default: (env) => path.join(read(cacheDir, env), 'data'),
    documented: '`.cache/data`',
    parse: underRoot,
    meaning:
      "per-generation immutable copies of the bundle files of directory sources (served by `/v1/exports`), and the loader's line indices (what the next export is compared with: see *Loading bundles*)",
    readBy: ['loader', 'start'],
  },
  cacheDir,
});
