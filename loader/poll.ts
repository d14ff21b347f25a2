/**
 * Polls a source for a new bundle, cheaply: the pointer (or flat manifest) is read with the
 * validators of the last read — `If-None-Match` / `If-Modified-Since` on a store, where a 304
 * costs a request and no body; size, mtime and inode of the file in a directory — and only a
 * changed document is read and parsed.
 *
 * The answer is the bundle's identity as the document states it (a pointer's bundleId,
 * manifestSha256 and publishedAt; a flat manifest's own sha256 and generatedAt), without
 * opening the bundle: the caller decides whether to load (openBundle checks everything then).
 * Follow mode is built on it elsewhere; this module keeps no state between calls.
 */
import { createHash } from 'node:crypto';
import type { ObjectStore } from '../src/store/object-store.ts';
import { MANIFEST_SCHEMA, POINTER_SCHEMA } from './bundle.ts';
import { LoadError } from './errors.ts';
import { type DocumentVersion, asLoadError, findManifest, openFolder } from './source.ts';

/** What to send next time: which document answered for the source, and its version. */
export interface PollValidators {
  /** `root`: the source's own `manifest.json`; `latest`: its `latest/manifest.json`. */
  at: 'root' | 'latest';
  /** The path or store URL of that document (for messages). */
  location: string;
  version: DocumentVersion;
}

export type PollAnswer =
  | { status: 'unchanged'; validators: PollValidators }
  | {
      status: 'changed';
      bundleId: string;
      manifestSha256: string;
      /** The pointer's `publishedAt`, else the manifest's `generatedAt`. */
      publishedAt: string | undefined;
      validators: PollValidators;
    };

export interface PollOptions {
  store: ObjectStore;
  /** The validators of the previous answer; without them the document is read whole. */
  since?: PollValidators;
  signal?: AbortSignal;
  cwd?: string;
}

const SHA256 = /^[0-9a-f]{64}$/;

function identityOf(bytes: Buffer): { bundleId: string; manifestSha256: string; publishedAt: string | undefined } {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new LoadError(`not valid JSON (${(error as Error).message})`, { file: 'manifest.json' });
  }
  if (doc?.schemaVersion === POINTER_SCHEMA) {
    const { bundleId, manifestSha256, publishedAt } = doc;
    if (typeof bundleId !== 'string' || bundleId === '' || typeof manifestSha256 !== 'string' || !SHA256.test(manifestSha256)) {
      throw new LoadError('publish pointer has no valid bundleId and manifestSha256', { file: 'manifest.json' });
    }
    return { bundleId, manifestSha256, publishedAt: typeof publishedAt === 'string' ? publishedAt : undefined };
  }
  if (doc?.schemaVersion === MANIFEST_SCHEMA) {
    // A flat manifest is its own identity: the registry's default bundle id is its sha256.
    const manifestSha256 = createHash('sha256').update(bytes).digest('hex');
    return { bundleId: manifestSha256, manifestSha256, publishedAt: typeof doc.generatedAt === 'string' ? doc.generatedAt : undefined };
  }
  throw new LoadError(`schemaVersion must be ${POINTER_SCHEMA} or ${MANIFEST_SCHEMA}, got ${JSON.stringify(doc?.schemaVersion)}`, { file: 'manifest.json' });
}

/** Reads the pointer (or flat manifest) of `source`: `unchanged` since `since`, or the bundle it names now. */
export async function pollSource(source: string, { store, since, signal, cwd }: PollOptions): Promise<PollAnswer> {
  try {
    const root = openFolder(source, store, cwd);
    const found = await findManifest(root, { since: since?.version, at: since?.at, signal });
    const at = found.folder === root ? 'root' : 'latest';
    if (found.read.status === 'missing') throw new LoadError(`no manifest.json in ${root.where} (nor in ${root.resolve('latest/').where})`, { file: 'manifest.json' });
    if (found.read.status === 'not-modified') return { status: 'unchanged', validators: since! };
    const validators = { at, location: found.folder.locate('manifest.json'), version: found.read.version } as const;
    return { status: 'changed', ...identityOf(found.read.bytes), validators };
  } catch (error) {
    throw asLoadError(error);
  }
}
