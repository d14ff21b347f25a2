/**
 * How a GET route is registered: with its operation — summary, declared query parameters and
 * what it answers — attached to the router layer, so the OpenAPI document (openapi.ts) is
 * written from the router itself. The handler receives the query as those same declarations
 * validated it (src/query/parameters.ts): a parameter cannot be accepted without being
 * documented. Path parameters are declared once by name (`PATH_PARAMETERS`) and checked
 * against their schema too; handlers keep reading them from `ctx.params`.
 *
 * The router answers HEAD for every GET route; what HEAD answers is the GET answer's headers.
 */
import { type AnyParameter, type Values, conforms, readQuery } from '../query/parameters.ts';
import { BUNDLE, PATH_PARAMETERS } from '../query/route-parameters.ts';
import { ApiError } from '../errors.ts';
import type { CostClass, RoutesByCost } from '../limits/request-cost.ts';
import type { AppContext, AppRouter } from './context.ts';
import type { JsonSchema } from './records.ts';

/** What a 200 carries. */
export type Answer =
  /** JSON in the envelope: one record (`one`) or a page of them with `nextCursor` (`list`). */
  | { kind: 'one' | 'list'; data: JsonSchema; degraded?: boolean }
  /** JSON outside the envelope (the OpenAPI document itself). */
  | { kind: 'bare'; data: JsonSchema }
  /** Prometheus text exposition. */
  | { kind: 'metrics' }
  /** A bundle file, with byte ranges and validators. */
  | { kind: 'file' }
  /** Server-Sent Events, each event's `data` one record (src/routes/stream.ts). */
  | { kind: 'stream'; data: JsonSchema };

export interface Operation<Ps extends readonly AnyParameter[] = readonly AnyParameter[]> {
  summary: string;
  description?: string;
  /** Query parameters, in validation order. */
  query: Ps;
  /** Request headers the route reads (documented; default: `If-None-Match` on conditional routes). */
  headers?: readonly AnyParameter[];
  answer: Answer;
  /** Fails with Elasticsearch, so it can answer 503 and 504 (default true). */
  readsIndex?: boolean;
  /** Answers 304 to a matching conditional GET (default: as `readsIndex`; see http/middleware/caching.ts). */
  conditional?: boolean;
  /** Answers 404 even without a path parameter (an operations document the bundle lacks). */
  mayBeMissing?: boolean;
  /** Answers 410 for a record the registry removed (src/indices/changes.ts). */
  mayBeGone?: boolean;
  /** Takes `bundle=` (default: every JSON read of the index; see `pinnable`). */
  pins?: boolean;
  /** What a request costs from its client's budget (src/limits/request-cost.ts); default from `answer`: a list is `list`, a file `download`, metrics `metrics`, the rest `document`. */
  cost?: CostClass;
}

/** The cost class of an operation: declared, else what its answer implies. */
export function costOf(operation: Operation): CostClass {
  if (operation.cost) return operation.cost;
  const kind = operation.answer.kind;
  return kind === 'list' ? 'list' : kind === 'file' ? 'download' : kind === 'metrics' ? 'metrics' : 'document';
}

/** Costs already matched, per router and path: every request asks (the rate limit, the refusals before Koa), and routes never change once registered. */
const MATCHED = new WeakMap<AppRouter, Map<string, CostClass | undefined>>();
/** Paths remembered per router: ids make paths countless, so the memory is emptied when full. */
const MATCHED_PATHS = 4096;

/** The cost class of the route a request path matches (its GET), or undefined when none does. */
export function routeCost(router: AppRouter, path: string): CostClass | undefined {
  let known = MATCHED.get(router);
  if (!known) MATCHED.set(router, (known = new Map()));
  if (known.has(path)) return known.get(path);
  if (known.size >= MATCHED_PATHS) known.clear();
  const cost = matchCost(router, path);
  known.set(path, cost);
  return cost;
}

function matchCost(router: AppRouter, path: string): CostClass | undefined {
  const matched = router.match(path, 'GET');
  if (!matched.route) return undefined;
  // The first route matched answers (a route never passes the request on): `/v1/killmails/stream` before `/v1/killmails/:id`.
  const layer = matched.pathAndMethod.find((l) => operationOf(l.stack.at(-1)) !== undefined);
  const operation = layer && operationOf(layer.stack.at(-1));
  return operation ? costOf(operation) : undefined;
}

/** Key of the operation on the route's handler; `operationOf` reads it back from the router stack. */
const OPERATION = Symbol('operation');

/** A route handler: the context and the query as its declarations validated it. */
export type Handler<Ps extends readonly AnyParameter[]> = (ctx: AppContext, query: Values<Ps>) => unknown;

/** Checks each path parameter against its declaration; a route with an undeclared one cannot be registered. */
function checkPath(ctx: AppContext): void {
  for (const [name, value] of Object.entries(ctx.params as Record<string, string>)) {
    const declared = PATH_PARAMETERS[name as keyof typeof PATH_PARAMETERS];
    if (!conforms(declared.schema, value)) throw ApiError.badParameter(name, `${name} must be ${declared.expects}.`);
  }
}

/**
 * Whether a route answers from a kept bundle with `bundle=`: every JSON read of the index. Not the
 * streams (rows as they become visible, which a kept bundle never does again: `bundle=` there is
 * the 400 of any parameter a route does not take), nor the live bundle's files (`/v1/bundles/{id}/exports`).
 */
const pinnable = (operation: Operation) => operation.pins ?? (operation.readsIndex !== false && (operation.answer.kind === 'one' || operation.answer.kind === 'list'));

/** Registers `GET path` (and so HEAD) with its operation. */
export function route<const Ps extends readonly AnyParameter[]>(router: AppRouter, path: string, declared: Operation<Ps>, handler: Handler<Ps>): void {
  for (const [, name] of path.matchAll(/:(\w+)/g)) {
    if (!(name! in PATH_PARAMETERS)) throw new Error(`${path}: path parameter "${name}" is not declared in PATH_PARAMETERS`);
  }
  const operation = pinnable(declared) ? { ...declared, query: [...declared.query, BUNDLE] as unknown as Ps } : declared;
  const keepable = (operation.answer.kind === 'one' || operation.answer.kind === 'list' || operation.answer.kind === 'bare') && operation.readsIndex !== false && operation.conditional !== false;
  const middleware = async (ctx: AppContext) => {
    checkPath(ctx);
    const query = readQuery(ctx.query, operation.query);
    // Read by requestReader (context.ts): every reader of the request opens the pinned bundle.
    ctx.state.pinned = (query as { bundle?: string }).bundle;
    // Files (`format=csv|ndjson`) stream: the response cache keeps only whole JSON answers.
    const responses = keepable && (query as { format?: string }).format === undefined ? ctx.state.responses : undefined;
    // The response cache (src/http/response-cache.ts) keys on the route and the query as validated.
    const live = responses && (await responses.live().catch(() => undefined));
    if (!responses || !live) return void (await handler(ctx, query));
    await responses.cache.serve(ctx, live, `${path} ${JSON.stringify(ctx.params)} ${JSON.stringify(query)}`, async () => void (await handler(ctx, query)));
  };
  router.get(path, Object.assign(middleware, { [OPERATION]: operation }));
}

/** The operation a router layer was registered with, if any. */
export function operationOf(middleware: unknown): Operation | undefined {
  return (middleware as { [OPERATION]?: Operation } | undefined)?.[OPERATION];
}

/** Router path → path template (`:id` → `{id}`), as the root document and the OpenAPI document write them. */
export function templatePath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}

/** Shorthands for answers. */
export const one = (data: JsonSchema, options: { degraded?: boolean } = {}): Answer => ({ kind: 'one', data, ...options });
export const list = (data: JsonSchema): Answer => ({ kind: 'list', data });

/** Every GET route of the router in registration order: its layer, its `{param}` path, and the operation it was registered with (undefined: none). */
export function* getRoutes(router: AppRouter): Generator<{ layer: AppRouter['stack'][number]; path: string; operation: Operation | undefined }> {
  for (const layer of router.stack) {
    if (layer.methods.includes('GET')) yield { layer, path: templatePath(String(layer.path)), operation: layer.stack.map(operationOf).find((o) => o !== undefined) };
  }
}

/** Every GET route of the router by its cost class, as `{param}` paths, in registration order. */
export function routesByCost(router: AppRouter): RoutesByCost {
  const routes = new Map<CostClass, string[]>();
  for (const { path, operation } of getRoutes(router)) {
    if (!operation) continue;
    const cost = costOf(operation);
    routes.set(cost, [...(routes.get(cost) ?? []), path]);
  }
  return routes;
}
