/**
 * The gateway's stack doing none of the gateway's own work: what a gateway built as this one is
 * built (Node's HTTP server, Koa with every middleware of src/app.ts, the project's
 * Elasticsearch client, its metrics and log, composed by src/compose.ts as the gateway is)
 * reaches on these cores. Like bench/one-hop.ts it
 * forwards each request's bytes to Elasticsearch and answers Elasticsearch's bytes, but through
 * that stack. What the gateway does beyond it is its own work: routing among its routes,
 * parameters, the search body, the live generation, admission, the rows cut out of the response,
 * the envelope and the cursor. It is given the requests the http benchmark sends Elasticsearch
 * directly, and `GET /hop/<n>` sends the n-th of them, as it was given (the stack answers GET
 * only).
 *
 * `ES_URL=… HOP_REQUESTS_FILE=<json [{path, body}]> node bench/stack-hop.ts` prints `listening on
 * http://127.0.0.1:<port>/v1`; every other setting is read as the gateway reads it
 * (src/config.ts), so the benchmark runs both alike.
 */
import { readFileSync } from 'node:fs';
import Router from '@koa/router';
import { loadConfig } from '../src/config.ts';
import type { AppState } from '../src/routes/context.ts';
import { createClient } from '../src/search/client.ts';
import { collect } from '../src/search/search-service.ts';
import { startServer } from '../src/server.ts';

const config = loadConfig({ ...process.env, PORT: process.env.PORT ?? '0' });
const esUrl = process.env.ES_URL ?? 'http://127.0.0.1:9200';
const client = createClient(esUrl, config.esRequestTimeoutMs, 'failover');
const requests = JSON.parse(readFileSync(process.env.HOP_REQUESTS_FILE!, 'utf8')) as { path: string; body: string }[];

const router = new Router<AppState>();
router.get('/hop/:n', async (ctx) => {
  const request = requests[Number(ctx.params.n)];
  if (!request) return;
  const [path, querystring] = request.path.split('?');
  const response = await client.transport.request({ method: 'POST', path: path!, querystring, body: request.body }, { asStream: true, meta: true, headers: { 'content-type': 'application/json' } });
  // Read as the gateway reads a search's body.
  ctx.body = await collect(response.body as unknown as NodeJS.ReadableStream);
  ctx.type = 'application/json; charset=utf-8';
  ctx.status = response.statusCode ?? 502;
  // As a page read from a generation: the caching middleware then does what it does for one (its ETag).
  ctx.state.generation = 'stack-hop';
});

// The gateway's own server and composition (src/compose.ts), serving these routes instead of the API's.
const running = await startServer(config, esUrl, { router: () => router });
console.log(`listening on ${running.url}/v1`);
process.on('SIGTERM', () => void running.close().then(() => process.exit(0)));
