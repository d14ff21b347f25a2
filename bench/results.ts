/**
 * Keeps benchmark results: the whole report as `bench/results/<date>.json` (not committed: the
 * run prints where), and `bench/RESULTS.md`, the latest figures of each benchmark — a section per
 * benchmark, each headed by the run it came from (date, commit, machine). A full run rewrites the
 * sections of the benchmarks it ran and keeps the others as they were (a `--quick` one leaves the
 * file alone); the history is in git.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FreshnessBenchResult } from './freshness.ts';
import type { HttpBenchResult } from './http.ts';
import type { LoadBenchResult } from './load.ts';
import type { OverloadBenchResult, ScenarioFigures } from './overload.ts';
import type { StreamBenchResult } from './stream.ts';
import type { WorkersBenchResult } from './workers.ts';
import type { YearBenchResult } from './year.ts';
import type { AutocompleteBenchResult } from './autocomplete.ts';
import type { ClientBenchResult } from './client.ts';
import type { ScaleBenchResult } from './scale.ts';
import type { SoakResult } from './soak.ts';
import { type Machine, QUIET_CORES } from './support.ts';

interface Report {
  date: string;
  quick: boolean;
  /** The code measured: a commit, marked when the working tree differed from it. */
  commit?: string;
  machine: Machine;
  load?: LoadBenchResult;
  freshness?: FreshnessBenchResult;
  http?: HttpBenchResult;
  scale?: ScaleBenchResult;
  autocomplete?: AutocompleteBenchResult;
  client?: ClientBenchResult;
  soak?: SoakResult;
  overload?: OverloadBenchResult;
  workers?: WorkersBenchResult;
  stream?: StreamBenchResult;
  year?: YearBenchResult;
}

const HEADER =
  '# Benchmark results\n\nThe latest figures of each benchmark, a section each, written by `npm run bench`: a run rewrites the sections of the benchmarks it ran and keeps the others (the history is in git). Ratios are against bounds measured in the same run; how to read each table: bench/README.md.\n';
const row = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;

function freshnessTable(f: FreshnessBenchResult): string[] {
  const actions = (l: FreshnessBenchResult['full']) => {
    const by = Object.entries(l.actions).reduce<Record<string, string[]>>((acc, [name, action]) => ({ ...acc, [action]: [...(acc[action] ?? []), name] }), {});
    return Object.entries(by).map(([action, names]) => `${action}: ${names.length > 3 ? `${names.length} indices` : names.join(', ')}`).join('; ');
  };
  return [
    `**Freshness loop** — scale ${f.bundle.scale}; the next export adds ${f.bundle.newEvents.toLocaleString('en')} events to ${f.bundle.events.toLocaleString('en')} and one late arrival; every load by \`npm run load\` in its own process. First-seen instants carried: **${f.carryRatio}×** a full load (goal ≤ 1.3); only events changed: **${f.incrementalRatio}×** a full load (goal ≤ 0.3); ${f.otherDataRatio === undefined ? '' : `a bundle of other data, as planned: **${f.otherDataRatio}×** the same forced (goal ≤ 1.05); `}from the object store (moto on loopback, SigV4): **${f.storeRatio}×** the same from a directory; follow lag, publication to live, a follower checking every second: **${f.followLagSeconds} s**.`,
    '',
    row(['load', 'seconds', 'rows read', 'peak RSS MB', 'indices']),
    row(['---', '---:', '---:', '---:', '---']),
    row(['full, nothing live', f.full.seconds, f.full.rows, f.full.peakRssMb, actions(f.full)]),
    row(['full, forced over the live generation (carrying first-seen instants)', f.fullCarrying.seconds, f.fullCarrying.rows, f.fullCarrying.peakRssMb, actions(f.fullCarrying)]),
    row(['next export, only events changed', f.incremental.seconds, f.incremental.rows, f.incremental.peakRssMb, actions(f.incremental)]),
    ...(f.otherData && f.otherDataForced
      ? [
          row(['a bundle of other data over the next export, as planned', f.otherData.seconds, f.otherData.rows, f.otherData.peakRssMb, actions(f.otherData)]),
          row(['the same, forced', f.otherDataForced.seconds, f.otherDataForced.rows, f.otherDataForced.peakRssMb, actions(f.otherDataForced)]),
        ]
      : []),
    row(['full from the object store, nothing live', f.fullFromStore.seconds, f.fullFromStore.rows, f.fullFromStore.peakRssMb, actions(f.fullFromStore)]),
    '',
  ];
}

function loadTable(load: LoadBenchResult): string[] {
  return [
    `**Loader vs raw \`_bulk\` of its own documents** — ${load.bundle.rows.toLocaleString('en')} rows (scale ${load.bundle.scale}, ${load.bundle.uncompressedMb} MB uncompressed), the loader's ${load.bulkRequests} bulk requests of ${load.bulkMbPerRequest} MB replayed raw as ~5 MB requests, 2 in flight; loader peak RSS **${load.loaderPeakRssMb} MB**. Floor bound: raw over the same replay run beside the work no loader can skip (read, gunzip, check, parse and hash every line, on a thread of its own), the most a loader can reach on these cores`,
    '',
    row(['file', 'rows', 'loader rows/s', 'raw docs/s', 'loader / raw', 'floor bound', 'loader RSS after file (MB)']),
    row(['---', '---:', '---:', '---:', '---:', '---:', '---:']),
    ...load.files.map((f) => row([f.file, f.rows, f.loaderRowsPerSecond, f.rawDocsPerSecond, f.ratio, f.floorBound ?? '—', f.loaderPeakRssMb])),
    row(['**total**', load.total.rows, `**${load.total.loaderRowsPerSecond}** (${load.total.loaderSeconds} s)`, `${load.total.rawDocsPerSecond} (${load.total.rawSeconds} s)`, `**${load.total.ratio}**`, load.total.floorBound === undefined ? '—' : `**${load.total.floorBound}** (${load.total.floorSeconds} s)`, load.loaderPeakRssMb]),
    '',
  ];
}

function httpTable(http: HttpBenchResult): string[] {
  return [
    `**Gateway vs Elasticsearch directly** (response cache off) — ${http.bundle.entities.toLocaleString('en')} entities (scale ${http.bundle.scale}), 10 connections, ${http.rounds} × ${http.seconds} s per target; \`/v1/health\` ${http.health.requestsPerSecond} req/s`,
    '',
    row(['route', 'gateway req/s', 'p50 / p99 ms', 'direct req/s', 'direct p50 / p99 ms', 'ceiling', 'of ceiling', 'one Node hop req/s', 'hop of ceiling', 'gateway of hop', 'stack hop req/s', 'stack hop of ceiling', 'gateway of stack hop', 'CPU ms / request: gateway / hop / stack hop']),
    row(['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:']),
    ...http.routes.map((r) =>
      row([
        `\`${r.route}\``,
        r.gateway.requestsPerSecond,
        `${r.gateway.p50Ms} / ${r.gateway.p99Ms}`,
        r.direct.requestsPerSecond,
        `${r.direct.p50Ms} / ${r.direct.p99Ms}`,
        r.ceiling,
        `**${r.ofCeiling}**`,
        r.hop.requestsPerSecond,
        r.hopOfCeiling,
        `**${r.ofHop}**`,
        r.stackHop.requestsPerSecond,
        r.stackHopOfCeiling,
        `**${r.ofStackHop}**`,
        `${r.cpuMs.gateway} / ${r.cpuMs.hop} / ${r.cpuMs.stackHop}`,
      ]),
    ),
    '',
    'One Node hop (bench/one-hop.ts) forwards the direct requests and answers them, nothing else: what any Node process between clients and Elasticsearch reaches on these cores. The stack hop (bench/stack-hop.ts) forwards them through the gateway\'s own stack (Koa, every middleware, the Elasticsearch client) doing none of its work: what a gateway built as this one reaches.',
    '',
    '**CPU per request at one rate** — the gateway, the stack hop and the one hop side by side, each at the same fixed rate (a quarter of the gateway\'s rate above), CPU from /proc: what the gateway\'s own work costs beyond its stack, and the stack beyond a bare hop.',
    '',
    row(['route', 'req/s each', 'CPU ms / request: gateway', 'stack hop', 'one hop', 'stack hop of gateway']),
    row(['---', '---:', '---:', '---:', '---:', '---:']),
    ...http.routes.map((r) => row([`\`${r.route}\``, r.atRate.rate, r.atRate.cpuMs.gateway, r.atRate.cpuMs.stackHop, r.atRate.cpuMs.hop, `**${r.atRate.stackOfGateway}**`])),
    '',
    `**Response cache** (defaults): a repeated read against the \`/v1/health\` floor measured beside it (goal ≥ 0.8), and against the same body answered from memory by a bare Node server (bench/fixed-answer.ts); single flight: ${http.coalescing.requests} identical cold requests at once caused **${http.coalescing.searches}** Elasticsearch search(es), as Elasticsearch counted them.`,
    '',
    row(['route', 'hits req/s', 'p50 / p99 ms', 'health req/s', 'of health', 'bare server, same body req/s', 'of bare server', 'CPU ms / request: hit / health']),
    row(['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:']),
    ...http.cached.map((c) =>
      row([`\`${c.route}\``, c.gateway.requestsPerSecond, `${c.gateway.p50Ms} / ${c.gateway.p99Ms}`, c.health, `**${c.ofHealth}**`, c.fixed, `**${c.ofFixed}**`, `${c.cpuMs.hit} / ${c.cpuMs.health}`]),
    ),
    '',
  ];
}

function autocompleteTable(a: AutocompleteBenchResult): string[] {
  return [
    `**Autocomplete** — \`stillness\` entities at two catalogue sizes, 10 connections, name prefixes of 2–8 characters in rotation; gateway p99 at the largest size over the smallest: **${a.p99Growth}**. Directly: the suggester request the route sends first, and the two it sends together when that gives fewer than ten: the suggester with one typo, and the scored \`index_prefixes\` query (what it sent alone before). Prefix top-1: names only one entity starts with, at their shortest unique prefix.`,
    '',
    row(['entities (scale)', '`/v1/autocomplete` req/s', 'p50 ms', 'p99 ms', 'suggester directly p50 / p99 ms', 'typos suggester directly p50 / p99 ms', 'scored query directly p50 / p99 ms', 'prefix top-1']),
    row(['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:']),
    ...a.sizes.map((s) =>
      row([
        `${s.entities.toLocaleString('en')} (${s.scale})`,
        s.gateway.requestsPerSecond,
        `**${s.gateway.p50Ms}**`,
        `**${s.gateway.p99Ms}**`,
        `${s.suggester.p50Ms} / ${s.suggester.p99Ms}`,
        `${s.typos.p50Ms} / ${s.typos.p99Ms}`,
        `${s.scored.p50Ms} / ${s.scored.p99Ms}`,
        `${s.top1.first} / ${s.top1.tried} = ${s.top1.share}`,
      ]),
    ),
    '',
  ];
}

function clientTable(c: ClientBenchResult): string[] {
  const d = c.download;
  return [
    `**Client power** — scale ${c.bundle.scale} (${c.bundle.rows.toLocaleString('en')} rows), response cache off.`,
    '',
    row(['measure', 'gateway', 'limit in the same run', 'ratio']),
    row(['---', '---:', '---:', '---:']),
    row([`NDJSON download, ${d.rows.toLocaleString('en')} events (rows/s)`, d.ndjson.toLocaleString('en'), `${d.direct.toLocaleString('en')} (PIT + \`search_after\` directly)`, `**${d.ndjsonOfDirect}**`]),
    row([`CSV download, same rows (rows/s)`, d.csv.toLocaleString('en'), d.direct.toLocaleString('en'), `**${d.csvOfDirect}**`]),
    row([`gateway RSS during a ${d.memory.rows.toLocaleString('en')}-row download (MB)`, `peak ${d.memory.peakRssMb}`, `idle ${d.memory.idleRssMb}`, `**+${d.memory.overIdleMb} MB**`]),
    row([`${c.batch.ids} ids in one call (ms, mean of ${c.batch.sets})`, c.batch.batchMs, `${c.batch.singlesSequentialMs} one by one · ${c.batch.singlesTenAtOnceMs} ten at a time`, `**${c.batch.sequentialOverBatch}×** · ${c.batch.tenAtOnceOverBatch}× faster`]),
    row([`3 facets in one \`group_by\` (ms, mean of ${c.facets.queries} searches)`, c.facets.oneRequestMs, `${c.facets.threeSequentialMs} three in turn · ${c.facets.threeAtOnceMs} three at once`, `**${c.facets.sequentialOverOne}×** · ${c.facets.atOnceOverOne}×`]),
    '',
  ];
}

function scaleTable(scale: ScaleBenchResult): string[] {
  return [
    `**Events at scale** — 10 connections, ${scale.rounds} interleaved rounds once merges settled; kind filter p99 at the largest size over the smallest: **${scale.kindP99LargestOverSmallest}**`,
    '',
    row(['events', 'load rows/s (peak RSS)', 'first page p50 / p99 ms', 'deep page (offset) p50 / p99 ms', 'deep / first p99', 'kind filter p50 / p99 ms']),
    row(['---:', '---:', '---:', '---:', '---:', '---:']),
    ...scale.sizes.map((s) =>
      row([
        s.events.toLocaleString('en'),
        s.load ? `${s.load.rowsPerSecond} (${s.load.peakRssMb} MB)` : 'reused',
        `${s.firstPage.p50Ms} / ${s.firstPage.p99Ms}`,
        `${s.deepPage.p50Ms} / ${s.deepPage.p99Ms} (${s.deepOffset.toLocaleString('en')})`,
        `**${s.deepOverFirst.p99}**`,
        `${s.kindFilter.p50Ms} / ${s.kindFilter.p99Ms}`,
      ]),
    ),
    '',
    `**Query power at scale** — \`group_by\` over every event, p99 at the largest size over the smallest: \`kind\` **${scale.groupByKindP99LargestOverSmallest}**, \`occurredAt:day\` **${scale.groupByDayP99LargestOverSmallest}**. \`meta.count\`: the first page of \`/v1/events\` (default scope) sent to Elasticsearch directly, uncounted, counted exactly up to 100,000 rows (what the gateway sends) and counted exactly.`,
    '',
    row(['events', 'group_by=kind p50 / p99 ms', 'group_by=occurredAt:day p50 / p99 ms', 'ES first page uncounted p50 / p99 ms', 'counted ≤ 100 k p50 / p99 ms', 'counted exactly p50 / p99 ms']),
    row(['---:', '---:', '---:', '---:', '---:', '---:']),
    ...scale.sizes.map((s) =>
      row([
        s.events.toLocaleString('en'),
        `${s.groupByKind.p50Ms} / ${s.groupByKind.p99Ms}`,
        `${s.groupByDay.p50Ms} / ${s.groupByDay.p99Ms}`,
        `${s.count.none.p50Ms} / ${s.count.none.p99Ms}`,
        `${s.count.upTo100k.p50Ms} / ${s.count.upTo100k.p99Ms}`,
        `${s.count.exact.p50Ms} / ${s.count.exact.p99Ms}`,
      ]),
    ),
    '',
  ];
}

function soakTable(soak: SoakResult): string[] {
  return [
    `**Soak** — ${soak.minutes} min of mixed load over ${soak.paths} paths, request log on: ${soak.requests.toLocaleString('en')} requests, **${soak.errors} errors** (5xx, other non-2xx, connection errors, timeouts), ${soak.downloadsRefused.toLocaleString('en')} downloads refused by the per-client download limit (429, by design); gateway RSS ${soak.start.rssMb} MB and ${soak.start.openFds} fds at the start; RSS slope over the second half ${soak.rssSlopeSecondHalfMbPerMinute} MB/min`,
    '',
    row(['minute', 'req/s', 'p99 ms', 'errors', 'downloads refused', 'RSS MB', 'open fds']),
    row(['---:', '---:', '---:', '---:', '---:', '---:', '---:']),
    ...soak.slices.map((s) => row([s.minute, s.requestsPerSecond, s.p99Ms, s.errors, s.downloadsRefused, s.rssMb, s.openFds])),
    '',
  ];
}

function overloadTable(o: OverloadBenchResult): string[] {
  const client = (s: ScenarioFigures, name: string) => s.clients.find((c) => c.name === name)!;
  const statuses = (byStatus: Record<string, number>) => Object.entries(byStatus).map(([k, v]) => `${k}: ${v}`).join(', ') || '—';
  const crowdRow = (label: string, s: ScenarioFigures) => {
    const total = (key: 'timeouts' | 'networkErrors' | 'skipped' | 'deferred' | 'refusalsWithoutRetryAfter') => s.clients.reduce((n, c) => n + c[key], 0);
    const byStatus: Record<string, number> = {};
    for (const c of s.clients) for (const [k, v] of Object.entries(c.byStatus)) byStatus[k] = (byStatus[k] ?? 0) + v;
    const refused = s.clients.map((c) => c.refused.p99).sort((a, b) => b - a)[0] ?? 0;
    return row([label, `**${s.goodputOfCapacity}**`, `${s.ok.p50} / **${s.ok.p99}**`, statuses(byStatus), refused, total('timeouts') + total('networkErrors'), total('skipped'), total('refusalsWithoutRetryAfter'), `${s.gatewayRssMb.start} → ${s.gatewayRssMb.max} → ${s.gatewayRssMb.end}`, `${s.cores.gateway} / ${s.cores.clients} / ${s.cores.elasticsearch ?? '—'}`]);
  };
  const greedyRow = (label: string, s: ScenarioFigures) => {
    const polite = client(s, 'polite');
    const greedy = s.clients.find((c) => c.name.startsWith('greedy'))!;
    return row([label, statuses(polite.byStatus), `${polite.ok.p50} / **${polite.ok.p99}**`, statuses(greedy.byStatus), `${greedy.refused.p50} / ${greedy.refused.p99}`, greedy.refusalsWithoutRetryAfter, greedy.timeouts + greedy.skipped, greedy.networkErrors]);
  };
  return [
    `**Overload** — ${o.bundle.rows.toLocaleString('en')} rows (scale ${o.bundle.scale}); mix: ${o.mix.map((m) => `\`${m}\``).join(', ')}; ${o.seconds} s per scenario; request log on`,
    '',
    `Capacity (no limits, closed loop): **${o.capacity.requestsPerSecond} req/s**; 95 % of it from ${o.capacity.kneeConnections} connections (configured ES_MAX_IN_FLIGHT ${o.capacity.configuredMaxInFlight}, ES_QUEUE ${o.capacity.configuredQueue}); unloaded (1 connection) p50 ${o.unloaded.p50Ms} ms, p99 ${o.unloaded.p99Ms} ms.`,
    '',
    row(['connections', ...o.capacity.sweep.map((s) => s.connections)]),
    row(['---', ...o.capacity.sweep.map(() => '---:')]),
    row(['req/s', ...o.capacity.sweep.map((s) => s.requestsPerSecond)]),
    row(['p50 / p99 ms', ...o.capacity.sweep.map((s) => `${s.p50Ms} / ${s.p99Ms}`)]),
    '',
    `One greedy client (open loop, ${client(o.greedy.limited, 'greedy').rate} req/s = 4× capacity) beside a polite one (20 req/s of \`/v1/entities?limit=20\`; alone: p50 ${o.politeAlone.ok.p50} ms, p99 ${o.politeAlone.ok.p99} ms, ${statuses(o.politeAlone.byStatus)}). Polite p50 / p99 over alone: **${o.greedy.politeP50OverAlone.limited} / ${o.greedy.politeP99OverAlone.limited}** with the limits, p99 ${o.greedy.politeP99OverAlone.unlimited} without; beside a greedy client opening a new connection per request: **${o.greedy.politeP50OverAlone.fresh} / ${o.greedy.politeP99OverAlone.fresh}** (goals ≤ 2 / ≤ 3)${o.greedy.freshUncapped ? `, ${o.greedy.politeP50OverAlone.freshUncapped} / ${o.greedy.politeP99OverAlone.freshUncapped} without the connection cap` : ''}${o.greedy.freshBesideResets ? `, ${o.greedy.politeP50OverAlone.freshBesideResets} / ${o.greedy.politeP99OverAlone.freshBesideResets} when a bare server resets the greedy client's every connection (the bound of any cap)` : ''}.`,
    '',
    row(['settings', 'polite answers', 'polite p50 / p99 ms', 'greedy answers', 'greedy refusal p50 / p99 ms', 'refusals without Retry-After', 'greedy timeouts + not sent', 'greedy connections reset or failed']),
    row(['---', '---', '---:', '---', '---:', '---:', '---:', '---:']),
    greedyRow('defaults', o.greedy.limited),
    greedyRow('limits off', o.greedy.unlimited),
    greedyRow('defaults, greedy on a new connection per request', o.greedy.fresh),
    ...(o.greedy.freshUncapped ? [greedyRow('defaults but MAX_CONNECTIONS_PER_CLIENT=off, greedy on a new connection per request', o.greedy.freshUncapped)] : []),
    ...(o.greedy.freshBesideResets ? [greedyRow('the bound: greedy (new connection per request) reset at accept by a bare server', o.greedy.freshBesideResets)] : []),
    '',
    ...(o.crowd
      ? [
          `A crowd of ${o.crowd.limited.clients.length} clients, ${o.crowd.limited.clients[0]?.rate} req/s each (Poisson arrivals, within the budget), 4× capacity together, sending whatever the answers. Admitted p99 over unloaded p99: **${o.crowd.admittedP99OverUnloaded.limited}** with the limits, ${o.crowd.admittedP99OverUnloaded.unlimited} without${o.crowd.honoring ? `, ${o.crowd.admittedP99OverUnloaded.honoring} with the limits when the clients honour \`Retry-After\`` : ''}.`,
          '',
          ...(o.bound
            ? [
                `The bound from the same run: a closed loop of ${o.bound.atSlots?.connections ?? '—'} connections (admission with that many slots, a queue never empty and refusals free) gave ${o.bound.atSlots?.ofCapacity ?? '—'} of capacity at a p99 ${o.bound.atSlots?.p99OverUnloaded ?? '—'}× unloaded. The load generator took ${o.bound.clientCores.capacity} cores at capacity and ${o.bound.clientCores.crowd} in the crowd.${o.bound.crowdOfBound === undefined ? '' : ` The crowd's goodput (defaults) was **${o.bound.crowdOfBound}** of the bound's.`}${o.bound.esCores === undefined ? '' : ` Elasticsearch kept ${o.bound.esCores.atSlots} cores busy at the bound and ${o.bound.esCores.crowd} in the crowd (**${o.bound.esCores.crowdOfBound}** of them): on cores it shares, what the crowd's refusals take from it bounds the goodput.`}`,
                ...(o.bound.besideRefusals
                  ? [
                      '',
                      `The same closed loop beside the crowd, the crowd answered by a bare server that refuses every request at once (what no admission policy can beat once the refusals are answered and the crowd generated on these cores): ${o.bound.besideRefusals.requestsPerSecond} req/s, p50 ${o.bound.besideRefusals.p50Ms} ms, p99 ${o.bound.besideRefusals.p99Ms} ms, cores ${o.bound.besideRefusals.cores.gateway} (gateway and refuser) / ${o.bound.besideRefusals.cores.clients} / ${o.bound.besideRefusals.cores.elasticsearch ?? '—'}. The crowd's goodput was **${o.bound.besideRefusals.crowdOfIt}** of it, its admitted p99 **${o.bound.besideRefusals.admittedP99OverIt}×** its p99.`,
                    ]
                  : []),
                '',
              ]
            : []),
          row(['settings', 'goodput / capacity', 'admitted p50 / p99 ms', 'answers', 'worst refusal p99 ms', 'timeouts + errors', 'not sent (64 open)', 'refusals without Retry-After', 'gateway RSS MB start → max → end', 'cores busy: gateway / clients / Elasticsearch']),
          row(['---', '---:', '---:', '---', '---:', '---:', '---:', '---:', '---', '---:']),
          crowdRow('defaults', o.crowd.limited),
          crowdRow('limits off', o.crowd.unlimited),
          ...(o.crowd.honoring ? [crowdRow('defaults, clients honour Retry-After', o.crowd.honoring)] : []),
          ...(o.crowd.fifo ? [crowdRow('defaults but ES_QUEUE_ORDER=fifo', o.crowd.fifo)] : []),
          '',
        ]
      : []),
    ...(o.requestLog
      ? [
          `Request log: \`/v1/health\` ${o.requestLog.health.on} req/s with it on, ${o.requestLog.health.off} off (cost **${Math.round(o.requestLog.health.cost * 100)} %**); \`/v1/entities?limit=20\` ${o.requestLog.entities.on} vs ${o.requestLog.entities.off} (${Math.round(o.requestLog.entities.cost * 100)} %).`,
          '',
        ]
      : []),
  ];
}

function workersTable(w: WorkersBenchResult): string[] {
  return [
    `${w.cores} cores, ${w.seconds} s per target, 10 connections per worker; the ceiling is \`1 / (1/direct + 1/floor)\` with the floor the same workers answering \`/v1/health\`. CPU ms per request: the gateway's processes; Elasticsearch's (node stats) for the gateway's request and for the same request sent directly.`,
    '',
    row(['workers', 'route', 'gateway req/s', 'direct req/s', 'floor req/s', 'of ceiling', '× one worker', 'gateway CPU ms', 'ES CPU ms via gateway', 'ES CPU ms direct']),
    row(Array(10).fill('---')),
    ...w.steps.flatMap((s) =>
      s.routes.map((r) =>
        row([s.workers, `\`${r.route}\``, r.gateway.requestsPerSecond, r.direct.requestsPerSecond, s.floor.requestsPerSecond, `**${r.ofCeiling}**`, r.overOneWorker, r.cpuMs.gateway, r.cpuMs.esViaGateway, r.cpuMs.esDirect]),
      ),
    ),
    '',
    ...w.steps.flatMap((s) =>
      s.facets
        ? [`The overload mix's facets through ${s.workers} workers (the cost per request the capacity model reads):`, '', row(['route', 'gateway req/s', 'gateway CPU ms', 'ES CPU ms']), row(Array(4).fill('---')), ...s.facets.map((f) => row([`\`${f.route}\``, f.gateway.requestsPerSecond, f.cpuMs.gateway, f.cpuMs.esViaGateway])), '']
        : [],
    ),
  ];
}

function streamTable(r: StreamBenchResult): string[] {
  return [
    `Scale ${r.scale}, ${r.streams} killmail streams open on one gateway, a follower checking the store every second.`,
    '',
    row(['pointer written → first new row on a stream', 'pointer → every stream complete', 'new rows', 'missing / twice (all streams)', 'RSS idle → with streams', '/v1/entities p99 alone → beside the streams']),
    row(Array(6).fill('---')),
    row([`**${r.publishToFirstRowSeconds} s**`, `${r.publishToAllSeconds} s`, r.newRows, `**${r.missing} / ${r.twice}**`, `${r.rssMb.idle} → ${r.rssMb.streams} MB (**+${r.rssMb.delta}**)`, `${r.otherP99Ms.alone} → ${r.otherP99Ms.beside} ms (**${r.otherP99Ms.ratio}×**)`]),
    '',
  ];
}

function yearTable(y: YearBenchResult): string[] {
  const b = y.fullBuild;
  const routes = Object.keys(y.scale.year);
  return [
    `${y.bundle.events} events, ${y.bundle.entities} entities, ${y.bundle.rows} rows (${y.bundle.jsonlMb} MB of JSONL, ${y.bundle.storedMb} MB stored); a store of a tenth of the events beside it.`,
    '',
    row(['full build', 'rows/s', 'ES CPU', 'loader peak RSS', 'raw `_bulk` of its documents', 'loader / raw']),
    row(Array(6).fill('---')),
    row([`${b.seconds} s`, b.rowsPerSecond, `${b.esCpuSeconds} s`, `${b.peakRssMb} MB`, b.raw ? `${b.raw.seconds} s (${b.raw.docsPerSecond} docs/s)` : 'not run (`--no-raw`)', b.raw ? `**${b.raw.ratio}**` : '—']),
    '',
    row(['hourly export', 'new events', 'publication → live → served', 'load', 'read bound', '**load / read bound**', 'ES CPU to the swap', 'indexing the rows written', '**ES / indexing**', 'ES CPU of the warm-up', 'loader peak RSS', 'list p99 during / before', 'first group_by / warm', 'first histogram / warm']),
    row(Array(14).fill('---')),
    ...y.exports.map((e, i) =>
      row([
        i + 1,
        e.newEvents,
        `${e.publishToLiveSeconds} → ${e.publishToServedSeconds} s`,
        `${e.loadSeconds} s`,
        `${e.readBoundSeconds} s`,
        `**${e.readBoundRatio}×**`,
        `${e.esCpuSeconds} s`,
        `${e.esCpuIndexingSeconds} s (${e.written} rows)`,
        `**${e.esCpuRatio}×**`,
        `${e.warmEsCpuSeconds} s`,
        `${e.loaderPeakRssMb} MB`,
        `**${e.listP99Ratio}×**`,
        `${e.firstFacet.groupBy?.firstMs} / ${e.firstFacet.groupBy?.warmMs} ms (**${e.firstFacet.groupBy?.ratio}×**)`,
        `${e.firstFacet.histogram?.firstMs} / ${e.firstFacet.histogram?.warmMs} ms (**${e.firstFacet.histogram?.ratio}×**)`,
      ]),
    ),
    '',
    `A polite client, 20 requests a second over the mix, the response cache off; p50 / p99 ms idle on the small store and on the year (ratio of p99s), and on the small store during the year's full build (list pages' p99 **${y.servingDuringBuild.listP99Ratio}×** idle).`,
    '',
    row(['route', 'small store', 'year', '**year / small p99**', 'small store during the full build']),
    row(Array(5).fill('---')),
    ...routes.map((name) =>
      row([name, `${y.scale.small[name]?.p50} / ${y.scale.small[name]?.p99}`, `${y.scale.year[name]?.p50} / ${y.scale.year[name]?.p99}`, `**${y.scale.p99Ratio[name]}×**`, `${y.servingDuringBuild.duringBuild[name]?.p50} / ${y.servingDuringBuild.duringBuild[name]?.p99}`]),
    ),
    '',
    row(['every new row exactly once', 'expected', 'received', 'missing / twice', '', 'gateway RSS idle → end']),
    row(Array(6).fill('---')),
    row(['stream', y.stream.expected, y.stream.received, `**${y.stream.missing} / ${y.stream.twice}**`, '', `${y.gatewayRssMb.idle} → ${y.gatewayRssMb.end} MB (**${y.gatewayRssMb.delta >= 0 ? '+' : ''}${y.gatewayRssMb.delta}**)`]),
    row(['`since_indexed` walk', y.walk.expected, y.walk.received, `**${y.walk.missing} / ${y.walk.twice}**`, '', '']),
    '',
  ];
}

/** The benchmarks in the order RESULTS.md lists them, each with its tables. */
const SECTIONS: readonly [keyof Omit<Report, 'date' | 'quick' | 'commit' | 'machine'>, (r: Report) => string[]][] = [
  ['load', (r) => loadTable(r.load!)],
  ['freshness', (r) => freshnessTable(r.freshness!)],
  ['http', (r) => httpTable(r.http!)],
  ['scale', (r) => scaleTable(r.scale!)],
  ['autocomplete', (r) => autocompleteTable(r.autocomplete!)],
  ['client', (r) => clientTable(r.client!)],
  ['overload', (r) => overloadTable(r.overload!)],
  ['workers', (r) => workersTable(r.workers!)],
  ['stream', (r) => streamTable(r.stream!)],
  ['year', (r) => yearTable(r.year!)],
  ['soak', (r) => soakTable(r.soak!)],
];

/** The run a section's figures come from: when, on which code, on what machine. */
function runLine(r: Report, name: string): string {
  const m = r.machine;
  const busy =
    m.busyCoresAtStart === undefined ? '' : `; ${m.busyCoresAtStart} cores busy with other work at the start${m.busyCoresAtStart > QUIET_CORES ? ' (**a busy machine: the figures are disturbed**)' : ''}`;
  const steal = m.stealPercent?.[name] === undefined ? '' : ` The hypervisor took ${m.stealPercent[name]} % of the cores' time meanwhile (steal).`;
  return `Run of ${r.date} on ${r.commit ?? 'an unknown commit'}: ${m.cores} cores (${m.cpu}), Node ${m.node}, Elasticsearch ${m.elasticsearch} with a ${m.esHeapMb} MB heap on the same cores${busy}.${steal}`;
}

/** RESULTS.md's sections by benchmark name (`## load`, …), each with its heading; unknown ones are dropped. */
function sectionsOf(markdown: string): Map<string, string> {
  const sections = new Map<string, string>();
  for (const part of markdown.split(/^(?=## )/m).slice(1)) {
    const name = /^## (\S+)/.exec(part)?.[1];
    if (name !== undefined && SECTIONS.some(([known]) => known === name)) sections.set(name, part.trimEnd());
  }
  return sections;
}

export async function recordResults(report: Record<string, unknown>, benchDir: string): Promise<{ json: string; markdown: string; rewritten: string[] }> {
  const r = report as unknown as Report;
  const dir = path.join(benchDir, 'results');
  await mkdir(dir, { recursive: true });
  const json = path.join(dir, `${r.date.replace(/[:.]/g, '-')}.json`);
  await writeFile(json, `${JSON.stringify(report, null, 2)}\n`);
  const markdown = path.join(benchDir, 'RESULTS.md');
  // A quick pass measures less than the goals ask: it never replaces a full run's figures.
  if (r.quick) return { json, markdown, rewritten: [] };
  const sections = sectionsOf(await readFile(markdown, 'utf8').catch(() => ''));
  const rewritten: string[] = [];
  for (const [name, tables] of SECTIONS) {
    if (r[name] === undefined) continue;
    sections.set(name, [`## ${name}`, '', runLine(r, name), '', ...tables(r)].join('\n').trimEnd());
    rewritten.push(name);
  }
  const kept = SECTIONS.flatMap(([name]) => sections.get(name) ?? []);
  await writeFile(markdown, `${HEADER}\n${kept.join('\n\n')}\n`);
  return { json, markdown, rewritten };
}
