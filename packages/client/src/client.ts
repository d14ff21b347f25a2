/**
 * The client: openapi-fetch over the types openapi-typescript writes from /v1/openapi.json
 * (schema.ts, `npm run client:types`), and on top what every client of this API otherwise
 * writes by hand — pages followed by `nextCursor`, walks of what became visible since an instant
 * (`since_indexed`, `include=removed`), event streams resumed with `Last-Event-ID` across drops,
 * waits where the gateway asks for them (retry.ts) and one error class (errors.ts).
 */
import createFetchClient from 'openapi-fetch';
import { RegistryError } from './errors.ts';
import { type RetryOptions, retryingFetch, wait } from './retry.ts';
import type { components, paths } from './schema.ts';
import { sseMessages } from './sse.ts';

/** The API's schemas by name (`Schemas['Event']`, `Schemas['Killmail']` …). */
export type Schemas = components['schemas'];
export type Path = keyof paths;
type Operation<P extends Path> = paths[P]['get'];
/** The path and query parameters of a route. */
export type Params<P extends Path> = Omit<Operation<P>['parameters'], 'header' | 'cookie'>;
/** A route's answer (`{data, meta, nextCursor?}`). */
export type Answer<P extends Path> = Operation<P> extends { responses: { 200: { content: { 'application/json': infer A } } } } ? A : never;
/** The routes that answer pages. */
export type ListPath = { [P in Path]: 'nextCursor' extends keyof Answer<P> ? P : never }[Path];
/** A row of a list route's pages (`group_by` answers groups instead: `get` reads them). */
export type Row<P extends Path> = Answer<P> extends { data: infer D } ? (D extends readonly (infer R)[] ? Exclude<R, Schemas['Group']> : never) : never;
/** The routes that answer Server-Sent Events, and the rows they send (those of their list route). */
export type StreamPath = { [P in Path]: P extends `${string}/stream` ? P : never }[Path];
export type StreamRow<P extends StreamPath> = P extends `${infer L}/stream` ? (L extends ListPath ? Row<L> : unknown) : never;
/** The lists a walk reads: those that keep the instant each row became visible. */
export type WalkPath = '/v1/events' | '/v1/killmails';
/** A walk's filters: its list's query but the walk's own parameters. */
export type WalkQuery<P extends WalkPath> = Omit<NonNullable<Operation<P>['parameters']['query']>, 'since_indexed' | 'sort' | 'cursor'>;
/** What one request is given: its path and query parameters, and a signal. */
export type RequestOf<P extends Path> = Params<P> & { signal?: AbortSignal };
/** The request argument, optional where the route has no required path parameter. */
type RequestArg<P extends Path> = {} extends Params<P> ? [request?: RequestOf<P>] : [request: RequestOf<P>];
/** A list's query but what answers something else than its rows (`group_by`, `format`: read those with `get`). */
export type ListQuery<P extends ListPath> = Omit<NonNullable<Operation<P>['parameters']['query']>, 'group_by' | 'include_unknown' | 'format'>;
export type ListRequest<P extends ListPath> = Omit<RequestOf<P>, 'query'> & { query?: ListQuery<P> };
type ListArg<P extends ListPath> = {} extends ListRequest<P> ? [request?: ListRequest<P>] : [request: ListRequest<P>];
/** One page of a list: its rows, its `meta`, the cursor of the next page when there is one. */
export interface ListPage<P extends ListPath> {
  data: Row<P>[];
  meta: Answer<P> extends { meta: infer M } ? M : never;
  nextCursor?: string;
}

export interface ClientOptions {
  /** Where the gateway answers, e.g. `http://localhost:8080` (routes under /v1). */
  baseUrl: string;
  /** The fetch to send with (default: the global one). */
  fetch?: typeof fetch;
  retry?: RetryOptions;
  /** Headers of every request (a `User-Agent` that names your tool is welcome). */
  headers?: Record<string, string>;
}

export interface StreamOptions {
  /** Resume after this event (the `id` of the last event you handled). */
  lastEventId?: string;
  signal?: AbortSignal;
  /** Comment lines (`live`: the stream has sent what it caught up on and joins the live rows). */
  onComment?: (text: string) => void;
  /** The bundle the rows after it come from: the stream's first (its `Registry-Bundle-Id` header), then each other one (a load went live, a reconnect found another). */
  onBundle?: (bundle: BundleNamed) => void;
}

/** A bundle as a stream names it (its `bundle` events, its headers). */
export interface BundleNamed {
  bundleId: string;
  bundleGeneratedAt: string | null;
}

/** A row of a stream, and the id to resume after it. */
export interface StreamEvent<R> {
  id: string;
  row: R;
}

/** The first wait before reconnecting a stream that dropped, until the server sends a `retry:`. */
const RECONNECT_MS = 1000;

/** The headers that name the bundle an answer was read from, as /v1/openapi.json documents them (test/unit/client-types.test.ts holds them to the gateway's). */
export const BUNDLE_ID_HEADER = 'Registry-Bundle-Id';
export const BUNDLE_GENERATED_AT_HEADER = 'Registry-Bundle-Generated-At';

export class RegistryClient {
  /** openapi-fetch itself, typed by the OpenAPI document: for what the helpers below do not cover. */
  readonly api;

  constructor(options: ClientOptions) {
    const send = retryingFetch(options.fetch ?? globalThis.fetch.bind(globalThis), options.retry);
    this.api = createFetchClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), fetch: (request: Request) => send(request), headers: options.headers });
  }

  /** A route's answer; any other answer throws its RegistryError. */
  async get<P extends Path>(path: P, ...[request]: RequestArg<P>): Promise<Answer<P>> {
    const { signal, ...params } = (request ?? {}) as RequestOf<P>;
    return (await this.#send(path, { params, signal })).data as Answer<P>;
  }

  /** One page of a list (the first, or the one `query.cursor` names). */
  async page<P extends ListPath>(path: P, ...[request]: ListArg<P>): Promise<ListPage<P>> {
    return (await this.get(path, ...([request] as RequestArg<P>))) as ListPage<P>;
  }

  /** Every page of a list, each after the one before (`nextCursor`), while they come. */
  async *pages<P extends ListPath>(path: P, ...[request]: ListArg<P>): AsyncGenerator<ListPage<P>> {
    const first = (request ?? {}) as ListRequest<P>;
    let cursor: string | undefined;
    do {
      const next = { ...first, query: { ...first.query, ...(cursor === undefined ? {} : { cursor }) } };
      const page = await this.page(path, ...([next] as ListArg<P>));
      yield page;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  }

  /** Every row of a list, in its order. */
  async *rows<P extends ListPath>(path: P, ...request: ListArg<P>): AsyncGenerator<Row<P>> {
    for await (const page of this.pages(path, ...request)) yield* page.data;
  }

  /**
   * What became visible after `since` (`since_indexed`; without it, every row), in the order
   * rows became visible: every row once, and with `include: 'removed'` the rows that left
   * (tombstones) and changed, in place. Once it has ended, `indexedThrough` is the `since` of
   * the next walk.
   */
  walk<P extends WalkPath>(path: P, since?: string, query?: WalkQuery<P>, signal?: AbortSignal): Walk<Row<P>> {
    return new Walk(this, path, since, (query ?? {}) as Record<string, unknown>, signal);
  }

  /**
   * The rows of an event stream as they come, resumed after the last event id (rows and the ids
   * alone sent after each load) whenever the connection drops, until `signal` aborts. An answer
   * that is not a stream (a 400 naming `Last-Event-ID`, a 404) throws its RegistryError.
   */
  async *subscribe<P extends StreamPath>(path: P, params: Params<P> = {} as Params<P>, options: StreamOptions = {}): AsyncGenerator<StreamEvent<StreamRow<P>>> {
    const { signal, onComment, onBundle } = options;
    let last = options.lastEventId;
    let reconnectMs = RECONNECT_MS;
    /** The bundle last named to `onBundle`. */
    let bundle: string | undefined;
    for (;;) {
      signal?.throwIfAborted();
      const headers: Record<string, string> = { Accept: 'text/event-stream', ...(last === undefined ? {} : { 'Last-Event-ID': last }) };
      let body: ReadableStream<Uint8Array> | undefined;
      try {
        const answer = await this.#send(path, { params, signal, headers, parseAs: 'stream' });
        body = answer.data as ReadableStream<Uint8Array>;
        // The bundle the stream's first rows come from; a reconnect that finds another says so too.
        const bundleId = answer.response.headers.get(BUNDLE_ID_HEADER);
        if (bundleId !== null && bundleId !== bundle) {
          bundle = bundleId;
          onBundle?.({ bundleId, bundleGeneratedAt: answer.response.headers.get(BUNDLE_GENERATED_AT_HEADER) });
        }
      } catch (error) {
        // No answer at all: asked again after the wait, as a dropped stream is.
        if (!(error instanceof RegistryError) || error.status !== 0) throw error;
      }
      if (body) {
        try {
          for await (const message of sseMessages(body, onComment, signal)) {
            if (message.retry !== undefined) reconnectMs = message.retry;
            if (message.hasId) last = message.lastEventId;
            if (message.data === undefined) continue;
            // A named event is not a row: `bundle` says where the rows after it come from.
            if (message.event === 'bundle') {
              const named = JSON.parse(message.data) as BundleNamed;
              bundle = named.bundleId;
              onBundle?.(named);
            } else if (message.event === undefined || message.event === 'message') {
              yield { id: last!, row: JSON.parse(message.data) as StreamRow<P> };
            }
          }
        } catch (error) {
          if (signal?.aborted) throw error;
        }
      }
      await wait(reconnectMs, signal);
    }
  }

  /**
   * One GET through openapi-fetch: the answer's body, parsed (or its stream). An error answer
   * throws its RegistryError, no answer at all one of status 0; an abort stays the AbortError.
   */
  async #send(path: Path, init: { params?: unknown; signal?: AbortSignal; headers?: Record<string, string>; parseAs?: 'stream' }): Promise<{ data?: unknown; response: Response }> {
    let answer: { data?: unknown; error?: unknown; response: Response };
    try {
      answer = await (this.api.GET as (path: string, init: object) => Promise<typeof answer>)(path, init);
    } catch (error) {
      if (init.signal?.aborted) throw error;
      throw RegistryError.network(error);
    }
    if (answer.error !== undefined || !answer.response.ok) throw RegistryError.from(answer.response, answer.error);
    return answer;
  }
}

/** A walk of what became visible after an instant (RegistryClient `walk`). */
export class Walk<R> implements AsyncIterable<R> {
  /** `meta.indexedThrough` of the walk's pages, once it has ended: where the next walk starts (never earlier than its `since`). */
  indexedThrough: string | undefined;
  readonly #client: RegistryClient;
  readonly #path: WalkPath;
  readonly #since: string | undefined;
  readonly #query: Record<string, unknown>;
  readonly #signal: AbortSignal | undefined;

  constructor(client: RegistryClient, path: WalkPath, since: string | undefined, query: Record<string, unknown>, signal?: AbortSignal) {
    this.#client = client;
    this.#path = path;
    this.#since = since;
    this.#query = query;
    this.#signal = signal;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<R> {
    const query = { ...this.#query, ...(this.#since === undefined ? {} : { since_indexed: this.#since }), sort: 'indexedAt:asc' as const };
    let through: string | undefined;
    for await (const page of this.#client.pages(this.#path, { query, signal: this.#signal } as ListRequest<WalkPath>)) {
      through ??= (page.meta as { indexedThrough?: string | null }).indexedThrough ?? undefined;
      yield* page.data as R[];
    }
    this.indexedThrough = through ?? this.#since;
  }
}

export function createRegistryClient(options: ClientOptions): RegistryClient {
  return new RegistryClient(options);
}
