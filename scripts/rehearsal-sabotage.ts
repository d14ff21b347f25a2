/**
 * `npm run rehearsal -- --sabotage KIND`: the same deployment with one defect planted, which the
 * checker must catch and name: a checker earns trust by failing. Every defect is planted from
 * outside the product, never by a switch in src/ or loader/:
 * - a faulty proxy in front of one gateway (`startFaultyProxy`) sends one streamed row twice,
 *   skips one, drops one row from a `since_indexed` page, answers one request 500, or reads one
 *   request and never answers it;
 * - a row is deleted from a live index behind the loader's back (`deleteOneRow`);
 * - one gateway is started without the shared budget store;
 * - a module preloaded into one gateway's processes keeps 1 MB more every second
 *   (scripts/rehearsal-leak.ts).
 * Each defect is planted once, after the run has warmed up (a proxy: past `after` candidates).
 */
import { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse, Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What each kind plants, by where it is planted. */
export const PROXY_FAULTS = ['stream-twice', 'stream-skip', 'page-skip', 'answer-500', 'never-answered'] as const;
export type ProxyFault = (typeof PROXY_FAULTS)[number];
export const SABOTAGE_KINDS = [...PROXY_FAULTS, 'row-short', 'budget-apart', 'leak'] as const;
export type SabotageKind = (typeof SABOTAGE_KINDS)[number];

export const isProxyFault = (kind: string): kind is ProxyFault => (PROXY_FAULTS as readonly string[]).includes(kind);

export interface FaultyProxy {
  url: string;
  port: number;
  /** When the defect was planted (ms since the epoch), once it was. */
  plantedAt(): number | undefined;
  stop(): Promise<void>;
}

/**
 * An HTTP proxy in front of `target` that passes everything through as it came (status, headers,
 * body; a gateway gone is a connection closed without an answer), except, once, the defect. It
 * asks the gateway for identity bodies, so that it can read what it alters.
 */
export async function startFaultyProxy(target: string, fault: ProxyFault, { after = 3, host = '127.0.0.1' } = {}): Promise<FaultyProxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  let candidates = 0;
  let plantedAt: number | undefined;
  /** Whether this candidate is the one that gets the defect. */
  const plantHere = (): boolean => {
    if (plantedAt !== undefined || ++candidates <= after) return false;
    plantedAt = Date.now();
    return true;
  };
  const held = new Set<ServerResponse>();

  const server = createServer((req, res) => {
    if (fault === 'answer-500' && plantHere()) {
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"code":"internal","message":"planted"}}');
      return;
    }
    if (fault === 'never-answered' && plantHere()) {
      // Read whole, never answered: the connection stays open until the client gives up.
      req.resume();
      held.add(res);
      return;
    }
    const headers: IncomingHttpHeaders = { ...req.headers, host: upstream.host };
    delete headers['accept-encoding'];
    const forward = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers, agent }, (answer) => {
      const type = String(answer.headers['content-type'] ?? '');
      if (type.startsWith('text/event-stream') && (fault === 'stream-twice' || fault === 'stream-skip')) return relayStream(answer, res, fault, plantHere);
      if (fault === 'page-skip' && type.includes('json') && /[?&]since_indexed=/.test(req.url ?? '')) return relayPage(answer, res, plantHere);
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    // The gateway refused, reset or went away: so does the connection its client holds.
    forward.on('error', () => req.socket.destroy());
    // The client went away before its answer was whole (a stream closed): so does the gateway's request.
    res.on('close', () => res.writableFinished || forward.destroy());
    req.pipe(forward);
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    port,
    plantedAt: () => plantedAt,
    async stop() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      agent.destroy();
    },
  };
}

/**
 * An event stream passed on event by event (events end with a blank line). The planted row is
 * sent twice, or sent as its `id:` alone: the client's resume point moves past a row it never got.
 */
function relayStream(answer: IncomingMessage, res: ServerResponse, fault: 'stream-twice' | 'stream-skip', plantHere: () => boolean): void {
  res.writeHead(answer.statusCode!, answer.headers);
  let buffer = '';
  answer.setEncoding('utf8');
  answer.on('data', (text: string) => {
    buffer += text;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const event = buffer.slice(0, end + 2);
      buffer = buffer.slice(end + 2);
      if (!/^data:/m.test(event) || !plantHere()) res.write(event);
      else if (fault === 'stream-twice') res.write(event + event);
      else res.write(event.split('\n').filter((line) => !line.startsWith('data:')).join('\n'));
    }
  });
  answer.on('end', () => res.end(buffer));
  answer.on('error', () => res.destroy());
}

/** A JSON page read whole and passed on; the planted page loses its last row. */
function relayPage(answer: IncomingMessage, res: ServerResponse, plantHere: () => boolean): void {
  const chunks: Buffer[] = [];
  answer.on('data', (chunk: Buffer) => chunks.push(chunk));
  answer.on('error', () => res.destroy());
  answer.on('end', () => {
    let body = Buffer.concat(chunks);
    const page = answer.statusCode === 200 ? (JSON.parse(body.toString()) as { data?: unknown[] }) : undefined;
    if (page?.data && page.data.length > 0 && plantHere()) {
      page.data.pop();
      body = Buffer.from(JSON.stringify(page));
    }
    const headers = { ...answer.headers, 'content-length': String(body.length) };
    delete headers.etag;
    delete headers['transfer-encoding'];
    res.writeHead(answer.statusCode!, headers).end(body);
  });
}

/**
 * Deletes one document from the index behind `alias` as nothing in the product would: a live
 * generation one row short. The loader write-blocks what it made live; the block is lifted for
 * the one delete and put back.
 */
export async function deleteOneRow(esUrl: string, alias: string): Promise<string> {
  const json = async (path: string, init: RequestInit = {}) => {
    const response = await fetch(`${esUrl}${path}`, { ...init, headers: { 'content-type': 'application/json' } });
    if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${path}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<any>;
  };
  const hit = (await json(`/${alias}/_search?size=1&_source=false`)).hits.hits[0] as { _index: string; _id: string } | undefined;
  if (!hit) throw new Error(`${alias} holds no document to delete`);
  const block = (value: boolean | null) => json(`/${hit._index}/_settings`, { method: 'PUT', body: JSON.stringify({ 'index.blocks.write': value }) });
  const blocked = (await json(`/${hit._index}/_settings/index.blocks.write`))[hit._index]?.settings?.index?.blocks?.write === 'true';
  if (blocked) await block(false);
  await json(`/${hit._index}/_doc/${encodeURIComponent(hit._id)}?refresh=true`, { method: 'DELETE' });
  if (blocked) await block(true);
  return hit._id;
}
