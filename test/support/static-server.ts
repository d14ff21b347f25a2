/**
 * A static file server (node:http) over a directory, for the loader's and the gateway's store
 * tests, with the faults a real store or CDN shows injected on demand: a connection dropped
 * mid-file, a body that stalls, error statuses (503 with Retry-After) before the real answer.
 *
 * It speaks what the store client relies on — strong ETags (size and mtime), Last-Modified,
 * conditional GETs (304), `If-Match` (412), single byte ranges (206) — and can be told to have
 * no range support at all (it then answers every GET 200 from the first byte, as such servers
 * do). Every request is recorded, so a test can see a resume happen.
 */
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import path from 'node:path';

export interface Fault {
  /** `drop`: send half the body, then cut the connection; `stall`: send half, then nothing; `status`: answer with it instead. */
  kind: 'drop' | 'stall' | 'status';
  status?: number;
  retryAfter?: string;
  /** How many requests it hits (default 1). */
  times?: number;
  /** Run when it hits (e.g. to replace the file between the cut and the resume). */
  then?: () => void;
}

export interface Recorded {
  method: string;
  path: string;
  status: number;
  range?: string;
  ifMatch?: string;
}

export interface StaticServer {
  url: string;
  requests: Recorded[];
  /** Faults on requests whose path ends with `suffix` (GET only, except `status`). */
  inject(suffix: string, fault: Fault): void;
  close(): Promise<void>;
}

export async function startStaticServer(root: string, options: { ranges?: boolean } = {}): Promise<StaticServer> {
  const { ranges = true } = options;
  const faults: { suffix: string; fault: Fault; left: number }[] = [];
  const requests: Recorded[] = [];

  const server: Server = createServer((req, res) => {
    const urlPath = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const record: Recorded = { method: req.method ?? 'GET', path: urlPath, status: 0, range: req.headers.range, ifMatch: req.headers['if-match'] };
    requests.push(record);
    const answer = (status: number, headers: Record<string, string | number> = {}) => {
      record.status = status;
      res.writeHead(status, headers);
    };
    const armed = faults.find((f) => f.left > 0 && urlPath.endsWith(f.suffix) && (f.fault.kind === 'status' || req.method === 'GET'));
    if (armed?.fault.kind === 'status') {
      armed.left -= 1;
      armed.fault.then?.();
      answer(armed.fault.status ?? 503, armed.fault.retryAfter ? { 'Retry-After': armed.fault.retryAfter } : {});
      res.end();
      return;
    }
    const file = path.join(root, path.normalize(urlPath));
    let stats;
    try {
      stats = file.startsWith(root) ? statSync(file) : undefined;
    } catch {
      stats = undefined;
    }
    if (!stats?.isFile()) {
      answer(404);
      res.end();
      return;
    }
    const etag = `"${stats.size.toString(16)}-${Math.floor(stats.mtimeMs).toString(16)}"`;
    const lastModified = stats.mtime.toUTCString();
    const common: Record<string, string | number> = { ETag: etag, 'Last-Modified': lastModified, ...(ranges ? { 'Accept-Ranges': 'bytes' } : {}) };
    const ifMatch = req.headers['if-match'];
    if (ifMatch && ifMatch !== etag) {
      answer(412);
      res.end();
      return;
    }
    if (req.headers['if-none-match'] === etag || (!req.headers['if-none-match'] && req.headers['if-modified-since'] === lastModified)) {
      answer(304, common);
      res.end();
      return;
    }
    let start = 0;
    let end = stats.size - 1;
    let status = 200;
    const asked = ranges ? /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '') : null;
    if (asked) {
      start = Number(asked[1]);
      end = asked[2] ? Math.min(Number(asked[2]), end) : end;
      if (start > end) {
        answer(416, { 'Content-Range': `bytes */${stats.size}` });
        res.end();
        return;
      }
      status = 206;
      common['Content-Range'] = `bytes ${start}-${end}/${stats.size}`;
    }
    const length = end - start + 1;
    answer(status, { ...common, 'Content-Type': 'application/octet-stream', 'Content-Length': length });
    if (req.method === 'HEAD' || length === 0) {
      res.end();
      return;
    }
    if (armed && (armed.fault.kind === 'drop' || armed.fault.kind === 'stall')) {
      armed.left -= 1;
      const half = readFileSync(file).subarray(start, start + Math.max(1, Math.floor(length / 2)));
      // Once the half is flushed: a drop cuts the socket, a stall keeps it open and silent.
      res.write(half, () => {
        armed.fault.then?.();
        if (armed.fault.kind === 'drop') res.socket?.destroy();
      });
      return;
    }
    createReadStream(file, { start, end }).pipe(res);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    inject(suffix, fault) {
      faults.push({ suffix, fault, left: fault.times ?? 1 });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
