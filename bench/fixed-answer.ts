/**
 * The floor of answering from memory: a bare `node:http` server that answers each path with
 * bytes it was given, whole, with a type and a length, and does nothing else. The http benchmark
 * gives it the exact bodies of the repeated reads it measures, so a cache hit can be set against
 * what any Node process pays to send that many bytes on these cores, beside `/v1/health` (whose
 * body is a few hundred bytes).
 *
 * The overload benchmark uses it as the floor of refusing: with `REFUSE=<base64 body>` every
 * request is answered 503 with that body and `Retry-After: 1`, as admission control answers.
 *
 * With `RESET=1` it reads nothing: every connection is reset as soon as accepted, as the
 * gateway refuses a connection over `MAX_CONNECTIONS_PER_CLIENT` — the floor of refusing a client
 * that opens a connection per request.
 *
 * `ANSWERS_FILE=<json {path: base64 body}> node bench/fixed-answer.ts` (or `REFUSE=…`, `RESET=1`) prints
 * `listening on http://127.0.0.1:<port>/v1` (as the gateway does). A key `gzip <path>` holds that
 * path's gzip-encoded body, sent with `Content-Encoding: gzip` to a request that accepts gzip.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';

const reset = process.env.RESET === '1';
const refusal = reset || process.env.REFUSE === undefined ? undefined : Buffer.from(process.env.REFUSE, 'base64');
const answers = new Map(
  reset || refusal ? [] : Object.entries(JSON.parse(readFileSync(process.env.ANSWERS_FILE!, 'utf8')) as Record<string, string>).map(([path, body]) => [path, Buffer.from(body, 'base64')]),
);

const server = reset ? net.createServer((socket) => void socket.resetAndDestroy()) : http.createServer((req, res) => {
  if (refusal) return void res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'content-length': refusal.length, 'retry-after': '1' }).end(refusal);
  const gzip = /\bgzip\b/.test(req.headers['accept-encoding'] ?? '') ? answers.get(`gzip ${req.url}`) : undefined;
  const body = gzip ?? answers.get(req.url ?? '');
  if (!body) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length, ...(gzip && { 'content-encoding': 'gzip' }) }).end(body);
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  console.log(`listening on http://127.0.0.1:${port}/v1`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
