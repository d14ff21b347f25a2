/**
 * Filtered lists as files (`format=csv|ndjson` on every list route): every matching row, in the
 * list's order, at most DOWNLOAD_MAX_ROWS (config), read 500 at a time under Elasticsearch's point
 * in time (src/search: `scan`) and streamed with backpressure, so the gateway's memory stays
 * flat whatever the size. A client that leaves mid-stream ends the walk, which closes the point
 * in time at once.
 *
 * - NDJSON: each row as the JSON list answers it (the stored bytes, verbatim, unless the route
 *   reshapes rows or `select` picks fields), one per line.
 * - CSV (RFC 4180): a header row, CRLF line ends, UTF-8; a field with `"`, `,`, CR or LF quoted
 *   and its quotes doubled; nested values as JSON text; absent ones empty; text that a
 *   spreadsheet would run as a formula led by `'`. Columns: `select`'s (and `id`), else every
 *   field of the route's records.
 *
 * `X-Total-Count` is the number of rows the file holds, and `X-Truncated: true` says more
 * matched than the cap lets through. `Content-Disposition` names the file after
 * the route and the filters asked for.
 */
import { Readable } from 'node:stream';
import type { Row } from '../indices/description.ts';
import { toQuery } from '../query/list.ts';
import { selectFields } from '../query/select.ts';
import type { RawPage } from '../search/raw-hits.ts';
import { type AppContext, type RouteDeps, requestReader } from './context.ts';
import type { ListRequest } from './list-request.ts';

/** Rows read per point-in-time page: 500 keeps the buffers of a page in flight small (about 0.5 MB each) at the same rows/s as 1000. */
const PAGE_ROWS = 500;

const NEWLINE = Buffer.from('\n');

const TYPES = { csv: 'text/csv; charset=utf-8', ndjson: 'application/x-ndjson; charset=utf-8' } as const;

/**
 * Text a spreadsheet would run as a formula: a cell that begins with `=`, `+`, `-`, `@`, TAB or
 * CR (OWASP, "CSV injection"). Such text gets a leading `'`, which spreadsheets show as text;
 * registry names are written by players, and the file is meant to be opened.
 */
const FORMULA = /^[=+\-@\t\r]/;

/** One CSV field (RFC 4180); text that reads as a formula gets a leading `'` (numbers never do). */
export function csvField(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : typeof value === 'string' && FORMULA.test(value) ? `'${value}` : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV record and its CRLF. */
export function csvLine(values: readonly unknown[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

/** A file name for what was asked: the route, then the filters, in characters every system takes. */
export function fileName(route: string, bind: Record<string, unknown>, format: string): string {
  const clean = (text: string) => text.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^_+|_+$/g, '');
  // Path parameters are left out of the route's part: the filters name the record (`id-…`).
  const parts = [clean(route.replace(/^\/v1\//, '').replace(/\/:\w+/g, '').replace(/\//g, '-'))];
  for (const [key, value] of Object.entries(bind)) {
    if (value === undefined || typeof value === 'object') {
      if (Array.isArray(value)) parts.push(`${clean(key)}-${clean(value.join('+'))}`);
      continue;
    }
    parts.push(`${clean(key)}-${clean(String(value))}`);
  }
  return `${parts.filter(Boolean).join('_').slice(0, 120)}.${format}`;
}

/** The headers of a file answer: its type and name, the rows it holds (`total` matched, at most `cap`) and whether it was cut. */
export function fileHeaders(ctx: AppContext, file: { route: string; bind: Record<string, unknown>; format: 'csv' | 'ndjson'; total: number; cap: number }): void {
  ctx.type = TYPES[file.format];
  // Not kept by HTTP caches (middleware/caching.ts would answer a 304 after the walk began).
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Content-Disposition', `attachment; filename="${fileName(file.route, file.bind, file.format)}"`);
  ctx.set('X-Total-Count', String(Math.min(file.total, file.cap)));
  if (file.total > file.cap) ctx.set('X-Truncated', 'true');
}

/** A file's body from its chunks; a failure after the headers went out cuts the connection (an incomplete body), said in the log. */
export function fileBody(ctx: AppContext, deps: Pick<RouteDeps, 'logger'>, route: string, chunks: () => AsyncGenerator<Buffer | string>): Readable {
  async function* body(): AsyncGenerator<Buffer | string> {
    try {
      yield* chunks();
    } catch (error) {
      deps.logger.warn({ err: error, route }, 'download cut off by a failure');
      throw error;
    }
  }
  const stream = Readable.from(body(), { objectMode: false });
  // Koa leaves a response whose body fails after the headers went out open (it can no longer
  // answer an error): cut it, so the client sees an incomplete body and the connection is freed.
  stream.once('error', () => ctx.res.destroy());
  return stream;
}

export async function sendDownload<Source>(ctx: AppContext, deps: Pick<RouteDeps, 'search' | 'config' | 'logger'>, request: ListRequest<Source>, format: 'csv' | 'ndjson'): Promise<void> {
  const cap = deps.config.downloadMaxRows;
  const reader = await requestReader(ctx, deps.search);
  const list = request.query(reader.generation);
  const pages = reader.scan(request.index, { query: toQuery(list), sort: list.sort }, { pageSize: PAGE_ROWS, countUpTo: cap + 1, withChanges: request.withChanges });
  // The first page before any header: its count says whether the file is cut.
  const first = await pages.next();
  const total = (first.value as RawPage | undefined)?.total?.value ?? 0;
  fileHeaders(ctx, { route: request.route, bind: request.bind, format, total, cap });
  if (ctx.method === 'HEAD') {
    // Nothing is sent: end the walk now rather than leave the point in time to expire.
    await pages.return(undefined);
    ctx.body = '';
    return;
  }
  const columns = request.select ? ['id', ...request.select.filter((f) => f !== 'id')] : (request.columns ?? ['id']);
  // NDJSON of stored rows as the list answers them: the stored bytes, never parsed.
  const verbatim = format === 'ndjson' && request.toRecord === undefined && request.expand === undefined && request.select === undefined;

  /** A stored row as the list would answer it (the walk reads `_source.row`: `toRecord` gets it as `{row}`). */
  const record = (bytes: Buffer): Row => {
    const parsed = JSON.parse(bytes.toString('utf8')) as Row;
    const row = (request.toRecord ? request.toRecord({ row: parsed } as Source) : parsed) as Row;
    return request.select ? selectFields(row, request.select) : row;
  };
  /** A record as a line of the file, for rows that are not sent verbatim. */
  const line = (row: Row): string => (format === 'csv' ? csvLine(columns.map((column) => row[column])) : `${JSON.stringify(row)}\n`);

  /** The rows of a page the file still takes, as one buffer: a thousand rows in one write, not one each. */
  let sent = 0;
  const chunk = async (page: RawPage): Promise<Buffer> => {
    const hits = page.hits.slice(0, cap - sent);
    sent += hits.length;
    if (verbatim) return Buffer.concat(hits.flatMap((hit) => [hit.row, NEWLINE]));
    if (!request.expand) return Buffer.concat(hits.map((hit) => Buffer.from(line(record(hit.row)))));
    const records = await request.expand(reader, hits.map((hit) => JSON.parse(hit.row.toString('utf8')) as Row));
    return Buffer.from(records.map((row) => line(request.select ? selectFields(row, request.select) : row)).join(''));
  };
  // The header and the first page before the answer starts: a failure there is still a clean error answer.
  let head: Buffer;
  try {
    head = Buffer.concat([Buffer.from(format === 'csv' ? csvLine(columns) : ''), first.done ? Buffer.alloc(0) : await chunk(first.value)]);
  } catch (error) {
    await pages.return(undefined);
    throw error;
  }

  ctx.body = fileBody(ctx, deps, request.route, async function* () {
    try {
      yield head;
      while (sent < cap) {
        const page = await pages.next();
        if (page.done) return;
        yield await chunk(page.value);
      }
    } finally {
      // Ends the walk: the point in time is closed (also when the client left mid-stream).
      await pages.return(undefined);
    }
  });
}
