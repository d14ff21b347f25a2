/**
 * The physical limit of putting any Node process between a client and Elasticsearch: one HTTP
 * hop that does nothing else. Each request's bytes go to Elasticsearch as they came (method, path,
 * body) on a keep-alive connection, and its answer comes back whole, as the gateway answers
 * (buffered, one write with its length). No routing, parameters, cursor, envelope, ETag, limits,
 * log or metrics. The http benchmark sends it exactly what it sends Elasticsearch directly, so
 * its req/s against the direct ones is what one hop costs on these cores, and the gateway's
 * against it is what the gateway's own work costs.
 *
 * `ES_URL=… node bench/one-hop.ts` prints `listening on http://127.0.0.1:<port>/v1` (as the gateway does).
 */
import http from 'node:http';

const upstream = new URL(process.env.ES_URL ?? 'http://127.0.0.1:9200');
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

async function whole(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

const server = http.createServer(async (req, res) => {
  const body = await whole(req);
  const forwarded = http.request(
    { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, agent, headers: { 'content-type': 'application/json', 'content-length': body.length } },
    async (answer) => {
      const bytes = await whole(answer);
      res.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json', 'content-length': bytes.length }).end(bytes);
    },
  );
  forwarded.on('error', () => res.writeHead(502).end());
  forwarded.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  console.log(`listening on http://127.0.0.1:${port}/v1`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
