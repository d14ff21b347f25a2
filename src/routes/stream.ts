/**
 * `/v1/killmails/stream` and `/v1/events/stream`: the rows of a list's filters as Server-Sent
 * Events, each as the list route answers it (`data:`), with an id that resumes the stream
 * exactly (`Last-Event-ID`, or `since_indexed`): first what became visible since, in the order
 * rows became visible, then each new row as its load goes live (src/stream/hub.ts).
 *
 * The filters and scope are the timelines' declarations (src/query/timeline.ts), which the list
 * routes read too (./timeline.ts); what pages a list — `limit`,
 * `cursor`, `sort` (always `indexedAt:asc`), `select`, `group_by`, `format` — has no meaning
 * here and is a 400 like any unknown parameter.
 *
 * Registered before `/v1/killmails/:id` and `/v1/events/:id`, which would take `stream` for an id.
 */
import { clientOf } from '../limits/client-identity.ts';
import { listed, streamsField, streamsPolicy } from '../limits/fields.ts';
import { headerParameter } from '../query/parameters.ts';
import { cursorScope } from '../query/cursor.ts';
import { ENVIRONMENT } from '../query/route-parameters.ts';
import { CYCLE, CYCLES, scopeOf } from '../query/scope.ts';
import { type TimeBound, laterBound } from '../query/time-range.ts';
import { EVENT_TIMELINE, KILLMAIL_TIMELINE, type Timeline, boundTimeline, timelineIndex, timelineParameters, toTimelineQuery } from '../query/timeline.ts';
import type { Feed } from '../stream/hub.ts';
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
    const client = clientOf(ctx.req, rules).key;
    // Beside the points budget the rate limit reports: this client's streams.
    const field = ctx.response.get('RateLimit');
    ctx.set('RateLimit-Policy', listed(ctx.response.get('RateLimit-Policy'), streamsPolicy(config.streamsPerClient)));
    const remaining = (r: number) => ctx.set('RateLimit', listed(field, streamsField(r)));
    // What a refusal answers; an admitted stream says what it leaves.
    remaining(0);
    await hub.open({ client, feed, start, res: ctx.res, admitted: (held) => remaining(config.streamsPerClient - held - 1) });
    // Logged and timed as a 200 (Koa would count a response it did not write as a 404).
    ctx.status = 200;
    // The hub answers from here on: Koa neither writes nor compresses a body.
    ctx.respond = false;
  }

  const common = { readsIndex: true, conditional: false, cost: 'list', headers: [LAST_EVENT_ID], description: DESCRIPTION } as const;

  /** The stream route of a timeline: its list route's filters and scope, in the order rows became visible. */
  function streamRoute<T extends Timeline>(path: '/v1/killmails/stream' | '/v1/events/stream', summary: string, timeline: T, record: 'Killmail' | 'Event'): void {
    const query = [...SCOPE, ...timelineParameters(timeline.filters)] as const;
    route(router, path, { ...common, summary, query, answer: { kind: 'stream', data: ref(record) } }, (ctx, params) => {
      const bound = boundTimeline(timeline.filters, params);
      const bind = { environment: params.environment ?? config.defaultEnvironment, scope: scopeOf(params), ...bound, sort: 'indexedAt:asc' as const };
      const feed: Feed = {
        index: timelineIndex(timeline),
        key: cursorScope(path, { ...bind, include: params.include }),
        withChanges: params.include === 'removed',
        // The later of the client's `since_indexed` and the walk's bound: both keep rows first held after them.
        query: (after, currentCycle) => toTimelineQuery(timeline, { ...bind, sinceIndexed: laterBound(bound.sinceIndexed, after) }, currentCycle),
      };
      return open(ctx, feed, bound.sinceIndexed);
    });
  }

  streamRoute('/v1/killmails/stream', 'Killmails as they become visible (Server-Sent Events)', KILLMAIL_TIMELINE, 'Killmail');
  streamRoute('/v1/events/stream', 'Chain events as they become visible (Server-Sent Events)', EVENT_TIMELINE, 'Event');
}
