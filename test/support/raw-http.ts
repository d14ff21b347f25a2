/**
 * One raw HTTP exchange (node:http), the body kept as bytes: no client decompresses, follows or
 * retries behind the test's back, so `Content-Encoding`, ranges and 304s are seen as sent.
 */
import { type IncomingHttpHeaders, request } from 'node:http';

export interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export function rawRequest(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
