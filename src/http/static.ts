/**
 * The two pages the gateway serves besides the API: the explorer at /explorer/ and the API
 * reference at /docs/, built by web/build.ts into web/dist. Each page's `index.html` is
 * revalidated on every load (`no-cache` + ETag), so a new build shows at once; its assets carry
 * a content hash in their names and are cached for a year (`immutable`), gzip-compressed once
 * and kept in memory.
 *
 * `/` stays the API's root document for API clients: only a request that prefers `text/html`
 * over JSON (a browser's address bar) is redirected to /explorer/; `Accept: application/json`,
 * `*\/*` or no Accept get today's JSON. Everything under `/v1` is untouched.
 *
 * Deliberately not a general static server: two fixed prefixes, flat file names checked
 * against a strict pattern (no traversal, no directory listing), GET and HEAD only (the
 * request-path middleware refuses other methods before this runs).
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Context, Middleware } from 'koa';
import { ApiError } from '../errors.ts';
import { notModified } from './conditional.ts';
import { setRoutePattern } from './route-pattern.ts';

/** Where web/build.ts writes the pages. */
export const WEB_DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web/dist');

const PAGES = ['explorer', 'docs'] as const;
const YEAR = 365 * 24 * 3600;
const ASSET_NAME = /^[A-Za-z0-9_.-]+$/;

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/** Only this origin: the pages fetch nothing from any other host (Swagger UI needs inline styles). */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

interface Asset {
  body: Buffer;
  gzip: Buffer | undefined;
  etag: string;
  mtimeMs: number;
}

export interface StaticPagesOptions {
  /** Built pages (default web/dist). */
  dir?: string;
}

/** Middleware serving /explorer/ and /docs/, and redirecting browsers from `/` to /explorer/. */
export function staticPages({ dir = WEB_DIST }: StaticPagesOptions = {}): Middleware {
  const assets = new Map<string, Asset>();

  async function load(file: string): Promise<Asset | undefined> {
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) return undefined;
    const cached = assets.get(file);
    if (cached && cached.mtimeMs === info.mtimeMs) return cached;
    const body = await readFile(file);
    const compressible = /^(text\/|application\/json|image\/svg)/.test(typeOf(file));
    const asset: Asset = {
      body,
      gzip: compressible && body.length > 1024 ? gzipSync(body) : undefined,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
      mtimeMs: info.mtimeMs,
    };
    assets.set(file, asset);
    return asset;
  }

  return async (ctx, next) => {
    if (ctx.path === '/') {
      // The same URL answers JSON or a redirect depending on Accept: caches must keep them apart.
      ctx.vary('Accept');
      if (ctx.accepts('json', 'html') === 'html') {
        setRoutePattern(ctx, '/');
        ctx.status = 302;
        ctx.redirect('/explorer/');
        ctx.set('Cache-Control', 'no-cache');
        return;
      }
      return next();
    }
    const page = PAGES.find((name) => ctx.path === `/${name}` || ctx.path.startsWith(`/${name}/`));
    if (!page) return next();
    const rest = ctx.path.slice(page.length + 2);
    if (rest === '') {
      setRoutePattern(ctx, `/${page}/`);
      // `/explorer` → `/explorer/` (the request-path middleware already dropped a trailing slash).
      if (!ctx.originalUrl.split('?')[0]!.endsWith('/')) {
        ctx.status = 301;
        ctx.redirect(`/${page}/`);
        return;
      }
      const index = await load(path.join(dir, page, 'index.html'));
      if (!index) throw ApiError.notFound(`The ${page} page is not built: run \`npm run build:web\` (npm ci does it).`);
      return send(ctx, index, 'text/html; charset=utf-8', 'no-cache');
    }
    const [folder, name, ...more] = rest.split('/');
    setRoutePattern(ctx, `/${page}/assets/{file}`);
    if (folder !== 'assets' || name === undefined || more.length > 0 || !ASSET_NAME.test(name) || name.startsWith('.')) throw ApiError.notFound();
    const file = path.join(dir, page, 'assets', name);
    const asset = await load(file);
    if (!asset) throw ApiError.notFound();
    return send(ctx, asset, typeOf(file), `public, max-age=${YEAR}, immutable`);
  };
}

function send(ctx: Context, asset: Asset, type: string, cacheControl: string): void {
  ctx.set('Cache-Control', cacheControl);
  ctx.set('ETag', asset.etag);
  ctx.vary('Accept-Encoding');
  if (type.startsWith('text/html')) ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  ctx.type = type;
  ctx.status = 200;
  if (notModified(ctx)) {
    ctx.status = 304;
    ctx.body = null;
    return;
  }
  if (asset.gzip && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = asset.gzip;
  } else {
    ctx.body = asset.body;
  }
}

function typeOf(file: string): string {
  return TYPES[path.extname(file)] ?? 'application/octet-stream';
}
