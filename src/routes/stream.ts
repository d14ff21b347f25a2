/**
 * `/v1/killmails/stream` and `/v1/events/stream`: the rows of a list's filters as Server-Sent
 * Events, each as the list route answers it (`data:`), with an id that resumes the stream
 * exactly (`Last-Event-ID`, or `since_indexed`): first what became visible since, in the order
 * rows became visible, then each new row as its load goes live (src/stream/hub.ts).
 *
 * The filters and scope are the list routes' own declarations and query builders
 * (src/query/route-parameters.ts, src/query/timeline.ts); what pages a list — `limit`,
 * `cursor`, `sort` (always `indexedAt:asc`), `select`, `group_by`, `format` — has no meaning
 * here and is a 400 like any unknown parameter.
 *
 * Registered before `/v1/killmails/:id` and `/v1/events/:id`, which would take `stream` for an id.
 */
import { ApiError } from '../errors.ts';
import { clientIdentity } from '../http/client-identity.ts';
import { headerParameter } from '../query/parameters.ts';
import { cursorScope } from '../query/cursor.ts';
import {
  ENVIRONMENT,
  EVENT_KIND,
  IDS,
  INCLUDE,
  INVOLVED,
  KILLER,
  MODULE,
  NPC,
  LABEL,
  PACKAGE_ID,
  Q,
  REPORTER,
  SIDE,
  SINCE,
  SINCE_INDEXED,
  SOURCE_ID,
  SYSTEM,
  TRANSACTION_DIGEST,
  UNTIL,
  VICTIM,
} from '../query/route-parameters.ts';
import { CYCLE, CYCLES, scopeOf } from '../query/scope.ts';
import type { TimeBound } from '../query/time-range.ts';
import { toEventListQuery, toKillmailListQuery } from '../query/timeline.ts';
import { type Feed, type StreamHub, createStreamHub } from '../stream/hub.ts';
import { type Position, RESUME_HEADER, decodeResumeToken } from '../stream/resume-token.ts';
import type { AppContext, AppRouter, RouteDeps } from './context.ts';
import { route } from './operation.ts';
import { ref } from './records.ts';

const LAST_EVENT_ID = headerParameter(RESUME_HEADER, {
  description:
    'The `id` of the last event received (EventSource sends it when it reconnects): the stream first sends what became visible after that row, in the order rows became visible, then live rows. Before `since_indexed` when both are given. Opaque, signed: an altered id is a 400.',
  schema: { type: 'string' },
  expects: 'an event id of this stream',
});

const SCOPE = [ENVIRONMENT, CYCLES, CYCLE] as const;
const KILLMAIL_FILTERS = [...SCOPE, Q, IDS, INVOLVED, SIDE, SYSTEM, VICTIM, KILLER, REPORTER, NPC, LABEL, SINCE, UNTIL, SINCE_INDEXED, INCLUDE] as const;
const EVENT_FILTERS = [...SCOPE, Q, IDS, EVENT_KIND, MODULE, PACKAGE_ID, TRANSACTION_DIGEST, SOURCE_ID, SINCE, UNTIL, SINCE_INDEXED, INCLUDE] as const;

/** The later of the client's `since_indexed` and a walk's bound: both keep rows first held after them. */
const laterBound = (a: TimeBound | undefined, b: TimeBound | undefined) => (a === undefined ? b : b === undefined || a.at >= b.at ? a : b);

const DESCRIPTION =
  'Server-Sent Events (`text/event-stream`): one event per row, `data` the row as the list route answers it, `id` a resume token. ' +
  'Without `Last-Event-ID` or `since_indexed` the stream starts now; with one of them it first sends what became visible after it, in the order rows became visible, then each new row within a second or two of its load going live — ' +
  'each row once while generations move forward (around a rollback, at least once). An event with an `id` and no `data` moves the resume point past a generation that held nothing for these filters. A comment line (`:`) every 15 s keeps the connection open through proxies. ' +
  'Limited per client (`STREAMS_PER_CLIENT`: 429) and in all (`STREAMS_MAX`: 503 `overloaded`); a client that stops reading is disconnected once its unsent bytes pass `STREAM_BUFFER_KB`; on shutdown streams end, and clients reconnect with their last id.';

export function streamRoutes(router: AppRouter, deps: RouteDeps): void {
  const { config } = deps;
  const hub = deps.streams;
  const { rules } = deps;

  /** Opens the stream of `feed` after the client's resume point (its last id, else `since_indexed`, else now). */
  async function open(ctx: AppContext, feed: Feed, sinceIndexed: TimeBound | undefined): Promise<void> {
    const lastId = ctx.get(RESUME_HEADER).trim();
    const start: Position | undefined = lastId ? decodeResumeToken(lastId, feed.index, config.cursorSecret) : sinceIndexed && { indexedAt: sinceIndexed.at };
    ctx.set('Cache-Control', 'no-store');
    if (ctx.method === 'HEAD') {
      ctx.type = 'text/event-stream';
      ctx.status = 200;
      return;
    }
    const client = clientIdentity(
      { peer: ctx.req.socket.remoteAddress, forwardedFor: ctx.get('X-Forwarded-For') || undefined, forwarded: ctx.get('Forwarded') || undefined, apiKey: ctx.get('X-Api-Key') || undefined },
      rules,
    ).key;
    // Beside the points budget the rate limit reports: this client's streams.
    const policy = ctx.response.get('RateLimit-Policy');
    const field = ctx.response.get('RateLimit');
    ctx.set('RateLimit-Policy', `${policy ? `${policy}, ` : ''}"streams";q=${config.streamsPerClient};qu="concurrent-requests"`);
    const remaining = (r: number) => ctx.set('RateLimit', `${field ? `${field}, ` : ''}"streams";r=${r}`);
    // What a refusal answers; an admitted stream says what it leaves.
    remaining(0);
    await hub.open({ client, feed, start, res: ctx.res, admitted: (held) => remaining(Math.max(0, config.streamsPerClient - held - 1)) });
    // Logged and timed as a 200 (Koa would count a response it did not write as a 404).
    ctx.status = 200;
    // The hub answers from here on: Koa neither writes nor compresses a body.
    ctx.respond = false;
  }

  const common = { readsIndex: true, conditional: false, cost: 'list', headers: [LAST_EVENT_ID], description: DESCRIPTION } as const;

  route(router, '/v1/killmails/stream', { ...common, summary: 'Killmails as they become visible (Server-Sent Events)', query: KILLMAIL_FILTERS, answer: { kind: 'stream', data: ref('Killmail') } }, (ctx, params) => {
    const { q, system, victim, killer, reporter, npc, label, since, until, since_indexed: sinceIndexed, id: ids, involved, side } = params;
    if (side !== undefined && involved === undefined) throw ApiError.badParameter('side', 'side narrows involved: give involved=<entity id> with it.');
    const bind = { environment: params.environment ?? config.defaultEnvironment, scope: scopeOf(params), ids, q, system, victim, killer, reporter, npc, label, involved, side, since, until, sinceIndexed, sort: 'indexedAt:asc' as const };
    const feed: Feed = {
      index: 'killmails',
      key: cursorScope('/v1/killmails/stream', { ...bind, include: params.include }),
      withChanges: params.include === 'removed',
      query: (after, currentCycle) => toKillmailListQuery({ ...bind, sinceIndexed: laterBound(sinceIndexed, after) }, currentCycle),
    };
    return open(ctx, feed, sinceIndexed);
  });

  route(router, '/v1/events/stream', { ...common, summary: 'Chain events as they become visible (Server-Sent Events)', query: EVENT_FILTERS, answer: { kind: 'stream', data: ref('Event') } }, (ctx, params) => {
    const { q, kind, module, package_id: packageId, transaction_digest: transactionDigest, source_id: sourceId, since, until, since_indexed: sinceIndexed, id: ids } = params;
    const bind = { environment: params.environment ?? config.defaultEnvironment, scope: scopeOf(params), ids, kind, module, packageId, transactionDigest, sourceId, q, since, until, sinceIndexed, sort: 'indexedAt:asc' as const };
    const feed: Feed = {
      index: 'events',
      key: cursorScope('/v1/events/stream', { ...bind, include: params.include }),
      withChanges: params.include === 'removed',
      query: (after, currentCycle) => toEventListQuery({ ...bind, sinceIndexed: laterBound(sinceIndexed, after) }, currentCycle),
    };
    return open(ctx, feed, sinceIndexed);
  });
}
