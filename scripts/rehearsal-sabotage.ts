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
 * Each defect is planted once (a proxy: past `after` candidates, counted over every proxy of
 * the run). A sabotage run has no nemesis: the planted defect alone, so that the invariant it
 * breaks is the one the checker names (`CAUGHT_AS`).
 */
import { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse, Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { INVARIANTS } from './rehearsal-checks.ts';

/** What each kind plants, by where it is planted. */
export const PROXY_FAULTS = ['stream-twice', 'stream-skip', 'page-skip', 'answer-500', 'never-answered'] as const;
export type ProxyFault = (typeof PROXY_FAULTS)[number];
export const SABOTAGE_KINDS = [...PROXY_FAULTS, 'row-short', 'budget-apart', 'leak'] as const;
export type SabotageKind = (typeof SABOTAGE_KINDS)[number];

export const isProxyFault = (kind: string): kind is ProxyFault => (PROXY_FAULTS as readonly string[]).includes(kind);

/** The invariant of the checker (scripts/rehearsal-checks.ts) each kind breaks: what the run must name. */
export const CAUGHT_AS: Record<SabotageKind, string> = {
  'stream-twice': INVARIANTS.twice,
  'stream-skip': INVARIANTS.missing,
  'page-skip': INVARIANTS.missing,
  'answer-500': INVARIANTS.answers,
  'never-answered': INVARIANTS.answers,
  'row-short': INVARIANTS.counts,
  'budget-apart': INVARIANTS.budget,
  leak: INVARIANTS.memory,
};

/**
 * How long a sabotaged run lasts unless `--minutes` says: long enough for its defect to be planted
 * and seen. Two minutes hold four publications, the second generation live (row-short) and a
 * never-answered client's 30 s; a leak of 1 MB a second outgrows the memory check's margin (half
 * the second sample and 64 MB) only after about two and a half minutes of samples.
 */
export const SABOTAGE_MINUTES: Record<SabotageKind, number> = {
  'stream-twice': 2,
  'stream-skip': 2,
  'page-skip': 2,
  'answer-500': 2,
  'never-answered': 2,
  'row-short': 2,
  'budget-apart': 2,
  leak: 3,
};

/**
 * Candidates a proxy lets pass before it plants: a streamed row and a page belong to the first
 * publication (never one a rollback takes back, whose rows may come again), an answer comes once
 * the run is under way.
 */
export const PLANT_AFTER: Record<ProxyFault, number> = { 'stream-twice': 3, 'stream-skip': 3, 'page-skip': 0, 'answer-500': 20, 'never-answered': 20 };

/** One plant for every proxy of a run: the defect goes to the first candidate past `after`, wherever it passes. */
export interface Planter {
  plantHere(): boolean;
  /** When the defect was planted (ms since the epoch), once it was. */
  plantedAt(): number | undefined;
}

export function planter(after: number): Planter {
  let candidates = 0;
  let plantedAt: number | undefined;
  return {
    plantHere() {
      if (plantedAt !== undefined || ++candidates <= after) return false;
      plantedAt = Date.now();
      return true;
    },
    plantedAt: () => plantedAt,
  };
}

export interface FaultyProxy {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * An HTTP proxy in front of `target` that passes everything through as it came (status, headers,
 * body; a gateway gone is a connection closed without an answer), except, once, the defect. It
 * asks the gateway for identity bodies, so that it can read what it alters, and forwards each
 * client's address (`X-Forwarded-For`), so that a client keeps its own budget. An answer's defect
 * (a 500, or none at all) goes to a request that is not a stream's: a stream's client waits for
 * rows without a deadline, so it would never tell.
 */
export async function startFaultyProxy(target: string, fault: ProxyFault, plant: Planter, host = '127.0.0.1'): Promise<FaultyProxy> {
  const upstream = new URL(target);
  // It reaches the gateway from its own address, which a gateway can trust to forward its clients' (TRUSTED_PROXIES).
  const agent = new Agent({ keepAlive: true, maxSockets: 256, localAddress: host });
  const { plantHere } = plant;
  const held = new Set<ServerResponse>();

  const server = createServer((req, res) => {
    const answerFault = (fault === 'answer-500' || fault === 'never-answered') && !/\/stream\b/.test(req.url ?? '');
    if (answerFault && fault === 'answer-500' && plantHere()) {
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"code":"internal","message":"planted"}}');
      return;
    }
    if (answerFault && fault === 'never-answered' && plantHere()) {
      // Read whole, never answered: the connection stays open until the client gives up.
      req.resume();
      held.add(res);
      return;
    }
    const headers: IncomingHttpHeaders = { ...req.headers, host: upstream.host, 'x-forwarded-for': req.socket.remoteAddress };
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
export async function deleteOneRow(esUrl: string, alias: string, query: object = { match_all: {} }): Promise<string> {
  const json = async (path: string, init: RequestInit = {}) => {
    const response = await fetch(`${esUrl}${path}`, { ...init, headers: { 'content-type': 'application/json' } });
    if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${path}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<any>;
  };
  const hit = (await json(`/${alias}/_search?size=1&_source=false`, { method: 'POST', body: JSON.stringify({ query }) })).hits.hits[0] as { _index: string; _id: string } | undefined;
  if (!hit) throw new Error(`${alias} holds no document to delete`);
  const block = (value: boolean | null) => json(`/${hit._index}/_settings`, { method: 'PUT', body: JSON.stringify({ 'index.blocks.write': value }) });
  const blocked = (await json(`/${hit._index}/_settings/index.blocks.write`))[hit._index]?.settings?.index?.blocks?.write === 'true';
  if (blocked) await block(false);
  await json(`/${hit._index}/_doc/${encodeURIComponent(hit._id)}?refresh=true`, { method: 'DELETE' });
  if (blocked) await block(true);
  return hit._id;
}
