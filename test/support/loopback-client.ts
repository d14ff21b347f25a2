/**
 * Requests from a chosen loopback address (127.0.0.2, 127.0.0.3, …): the whole 127.0.0.0/8 is
 * this machine, so each address is a distinct client to the gateway, as it would be on the
 * internet. `fetch` cannot choose its source address; `http.request` can (`localAddress`).
 */
import { request } from 'node:http';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** GET `url` from `from`; the body is read whole and parsed when JSON. */
export function getFrom(from: string, url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress: from, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const json = /json/.test(String(res.headers['content-type'])) && text ? JSON.parse(text) : text;
        resolve({ status: res.statusCode!, headers: res.headers, body: json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The `r` and `t` of a `RateLimit: "default";r=..;t=..` field. */
export function remaining(answer: Answer): { r: number; t: number } | undefined {
  const match = /"default";r=(\d+);t=(\d+)/.exec(String(answer.headers.ratelimit ?? ''));
  return match ? { r: Number(match[1]), t: Number(match[2]) } : undefined;
}

/** A GET from `from` whose response is left open once its head arrived (a stream, a download): its status and a way to close it. */
export function holdFrom(from: string, url: string): Promise<{ status: number; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress: from, agent: false }, (res) => {
      res.resume();
      resolve({ status: res.statusCode!, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}
