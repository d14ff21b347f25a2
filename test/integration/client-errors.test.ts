/**
 * Requests Node's HTTP parser rejects before the app sees them (bad request line, NUL in the
 * target, headers over 16 KB) answer in the one error shape, as a complete HTTP/1.1 response
 * with `Connection: close`, over raw sockets (node:net) since no HTTP client sends such bytes.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { type RunningServer, startServer } from '../../src/server.ts';
import { uniquePrefix } from '../support/elasticsearch.ts';
import { captureLog } from '../support/log-capture.ts';

let gw: RunningServer;
const log = captureLog();

beforeAll(async () => {
  const config = loadConfig({ INDEX_PREFIX: uniquePrefix('client-errors'), PORT: '0', LOG_LEVEL: 'info', REGISTRY_NAME: 'client-error-test' });
  gw = await startServer(config, inject('esUrl'), { logDestination: log.destination });
});
afterAll(() => gw?.close());

interface RawResponse {
  statusLine: string;
  headers: Record<string, string>;
  body: string;
}

/** Writes `bytes` on a fresh connection and reads until the server closes it. */
function rawRequest(bytes: string | Buffer): Promise<RawResponse> {
  const { port, hostname } = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ statusLine, headers, body });
    });
  });
}

const bigHeader = (bytes: number) => `GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(bytes)}\r\n\r\n`;

describe('requests Node rejects', () => {
  it.each([
    ['a bad request line', 400, 'HELLO THERE\r\n\r\n'],
    ['a NUL in the target', 400, 'GET /v1/health\0x HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a header without a colon', 400, 'GET /v1/health HTTP/1.1\r\nHost x\r\n\r\n'],
    ['headers just over 16 KB', 431, bigHeader(16 * 1024)],
    ['headers of 1 MB', 431, bigHeader(1024 * 1024)],
  ])('%s → %i in the JSON error shape', async (_name, status, bytes) => {
    const res = await rawRequest(bytes);
    expect(res.statusLine).toMatch(new RegExp(`^HTTP/1\\.1 ${status} \\S`));
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers.connection).toBe('close');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
    const body = JSON.parse(res.body);
    expect(body).toEqual({ error: { code: 'bad_request', message: expect.any(String) }, meta: { registry: 'client-error-test', apiVersion: 'v1' } });
    if (status === 431) expect(body.error.message).toContain('16 KB');
  });

  it('answers a good request on a raw socket normally, and logs one line per rejected connection', async () => {
    const ok = await rawRequest('GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(ok.statusLine).toMatch(/^HTTP\/1\.1 200/);
    const before = log.find('request rejected').length;
    await rawRequest(bigHeader(1024 * 1024));
    const rejected = log.find('request rejected').slice(before);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toMatchObject({ level: 30, status: 431, reason: 'HPE_HEADER_OVERFLOW' });
  });
});
