/**
 * The object store `s3://` and `http(s)://` bundle sources are read from, by the loader, by
 * /v1/exports and by the publisher: one `Config` key, `store`, read from the AWS SDKs' own
 * variables and the project's retry settings.
 */
import { ConfigError, type Env, int, matching, textOf, withoutCredentials } from './parse.ts';
import { type Section, type Settings, readAll } from './setting.ts';
import type { StoreConfig } from './types.ts';

const readBy = ['loader', 'gateway', 'publisher'] as const;

/** A key is whole or absent. */
function credentials(env: Env): StoreConfig['credentials'] {
  const accessKeyId = textOf(env, 'AWS_ACCESS_KEY_ID');
  const secretAccessKey = textOf(env, 'AWS_SECRET_ACCESS_KEY');
  const sessionToken = textOf(env, 'AWS_SESSION_TOKEN');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together');
  }
  if (sessionToken !== undefined && accessKeyId === undefined) throw new ConfigError('AWS_SESSION_TOKEN needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  return accessKeyId === undefined ? undefined : Object.freeze({ accessKeyId, secretAccessKey: secretAccessKey!, ...(sessionToken ? { sessionToken } : {}) });
}

/** An http(s) origin, and a path under it, without credentials, query or fragment. */
function endpoint(raw: string, name: string): string {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url || !/^https?:$/.test(url.protocol) || url.username || url.password || url.search || url.hash) {
    throw new ConfigError(`${name} must be an http(s) URL such as https://<account>.r2.cloudflarestorage.com, got "${withoutCredentials(raw)}"`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

const settings: Settings<StoreConfig> = {
  credentials: {
    env: ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'],
    read: credentials,
    meaning:
      'key that signs (SigV4) every request to an `s3://` source, by the loader and by `/v1/exports`; id and secret together; `http(s)://` sources are read unsigned',
    readBy,
  },
  region: {
    env: 'AWS_REGION',
    else: 'AWS_DEFAULT_REGION',
    documented: 'guessed from the host (`auto` on R2), else `us-east-1`',
    parse: matching(/^[a-z0-9-]{1,40}$/, 'a region name such as eu-west-1 or auto'),
    meaning: 'region of the signature and of AWS URLs',
    readBy,
  },
  endpoint: {
    env: 'AWS_ENDPOINT_URL_S3',
    else: 'AWS_ENDPOINT_URL',
    documented: '— (AWS)',
    parse: endpoint,
    meaning: 'an S3-compatible store (`https://<account-id>.r2.cloudflarestorage.com`, MinIO): path-style URLs under it',
    readBy,
  },
  timeoutMs: {
    env: 'STORE_TIMEOUT_MS',
    default: 30_000,
    parse: int(100, 600_000),
    meaning:
      'a store request with no answer, or a body with no new byte, for this long is a fault; tries per request before a transient fault is final (see *Loading bundles*)',
    readBy,
  },
  attempts: { env: 'STORE_ATTEMPTS', default: 6, parse: int(1, 100), row: 'STORE_TIMEOUT_MS', readBy },
};

/** The object store settings (`StoreConfig`). */
export function parseStoreConfig(env: Env): StoreConfig {
  return Object.freeze(readAll(settings, env));
}

export const store: Section<'store'> = { keys: ['store'], settings, read: (env) => ({ store: parseStoreConfig(env) }) };
