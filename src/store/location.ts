/**
 * Where bundle files are: a local directory, an http(s) folder (a public bucket URL, any static
 * server) or an S3-compatible folder `s3://bucket/prefix`. Pure: parsing, resolving a relative
 * name against a folder (`../bundles/<id>/` included), and the http(s) URL an `s3://` key is
 * requested at. No I/O, no credentials: a URL that carries a user or password is refused, so no
 * message or generation document can ever repeat one.
 *
 * Store folders are kept as URLs ending in `/` (`s3://bucket/registry/`), so WHATWG URL
 * resolution does the joining, for `s3:` exactly as for `https:`.
 */
import path from 'node:path';
import { StoreError } from './errors.ts';

export type SourceLocation = { kind: 'dir'; path: string } | { kind: 'store'; url: string };

/** Where the store is reached: an endpoint (R2, MinIO, moto) means path-style URLs; none means AWS. */
export interface StoreEndpoint {
  endpoint?: string;
  region?: string;
}

/** S3 bucket names: 3–63 lowercase letters, digits, dots and hyphens. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Whether a source names a store (`s3://`, `http://`, `https://`) rather than a directory. */
export function isStoreUrl(source: string): boolean {
  return /^(s3|https?):\/\//i.test(source.trim());
}

/** A store folder URL, validated and ending in `/`. */
export function toStoreFolder(raw: string): string {
  const text = raw.trim();
  // Never echo a credential, even of a URL refused for carrying one.
  const shown = JSON.stringify(text.replace(/\/\/[^/@]*@/, '//…@'));
  if (!URL.canParse(text)) throw new StoreError(`not a valid URL: ${shown}`);
  const url = new URL(text);
  const scheme = url.protocol.toLowerCase();
  if (url.username || url.password) {
    throw new StoreError('a source URL must not carry a user or password (s3:// reads AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)');
  }
  if (url.search || url.hash) throw new StoreError(`a source URL names a folder; it takes no query or fragment: ${url.origin}${url.pathname}`);
  if (scheme === 's3:') {
    if (!BUCKET.test(url.hostname)) throw new StoreError(`not a valid bucket name in ${shown}: 3-63 lowercase letters, digits, dots and hyphens`);
    return `s3://${url.hostname}${url.pathname.replace(/\/*$/, '/')}`;
  }
  if (scheme !== 'http:' && scheme !== 'https:') throw new StoreError(`unsupported source scheme ${scheme}: use a directory, http(s):// or s3://`);
  url.pathname = url.pathname.replace(/\/*$/, '/');
  return url.href;
}

/** What an operator named: a store folder, or a directory resolved against `cwd`. */
export function parseSource(source: string, cwd: string): SourceLocation {
  if (isStoreUrl(source)) return { kind: 'store', url: toStoreFolder(source) };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source.trim())) throw new StoreError(`unsupported source ${JSON.stringify(source.replace(/\/\/[^/@]*@/, '//…@'))}: use a directory, http(s):// or s3://`);
  return { kind: 'dir', path: path.resolve(cwd, source) };
}

/** `relative` (a file name, `latest/`, `../bundles/<id>/`) against a store folder URL. */
export function resolveStoreUrl(folder: string, relative: string): string {
  return new URL(relative, folder).href;
}

/** The bucket and key of an `s3://` URL. */
export function s3Parts(url: string): { bucket: string; key: string } {
  const parsed = new URL(url);
  return { bucket: parsed.hostname, key: decodeURIComponent(parsed.pathname.slice(1)) };
}

/**
 * The http(s) URL a store URL is requested at. `https://` and `http://` are themselves. `s3://`
 * under an endpoint is path-style, `<endpoint>/<bucket>/<key>` (what R2, MinIO and moto accept);
 * without one it is AWS virtual-hosted style, `https://<bucket>.s3.<region>.amazonaws.com/<key>`
 * (path-style on AWS for buckets with dots, which a virtual host's certificate cannot cover).
 */
export function requestUrl(url: string, where: StoreEndpoint): string {
  const parsed = new URL(url);
  if (parsed.protocol !== 's3:') return parsed.href;
  const bucket = parsed.hostname;
  const key = parsed.pathname; // starts with "/", already percent-encoded
  if (where.endpoint) return `${where.endpoint.replace(/\/+$/, '')}/${bucket}${key}`;
  const host = where.region ? `s3.${where.region}.amazonaws.com` : 's3.amazonaws.com';
  return bucket.includes('.') ? `https://${host}/${bucket}${key}` : `https://${bucket}.${host}${key}`;
}
