/**
 * A pool of worker threads (parse-worker.ts) that turn chunks of a file's lines into bulk bytes,
 * so that on many cores the loader's one thread only reads, checks and sends: split, UTF-8
 * check, parse, document, row hash and bulk text of every row — most of the loader's CPU — run
 * beside it. One pool serves every file of a load (files load side by side); workers start on
 * demand, up to `size`, and the pool is closed when the load ends.
 *
 * Chunks are queued in the order they come and go to the first idle worker. What is queued is
 * bounded by the callers (read-on-pool.ts keeps a few chunks of a file ahead, no more). A worker
 * that dies fails the jobs it held; the others go on.
 */
import { availableParallelism } from 'node:os';
import { type ResourceLimits, Worker } from 'node:worker_threads';
import type { CycleStart } from '../src/config.ts';
import { LoadError } from './errors.ts';

/** What a worker is asked: one chunk of whole lines of a file (read-lines.ts LineChunk). */
export interface ParseRequest {
  job: number;
  /** The file's manifest path (errors name it). */
  file: string;
  /** The index description's name. */
  index: string;
  bytes: Uint8Array;
  firstLine: number;
  /** `sequence · 2³²` (row-items.ts): a document's version is this plus its line. */
  versionBase: number;
  indexedAt: string;
  /** The first-seen instants of the ids come from the previous index: ask for them first. */
  lookup: boolean;
  flushBytes: number;
  /** Encode the chunk's blocks of the line index too (line-index.ts). */
  lineIndex?: boolean;
}

/** A chunk's blocks of the line index, encoded (line-index.ts `encodeBlocks`). */
export interface PooledLineIndex {
  bytes: Uint8Array;
  blocks: number;
  entries: number;
}

/** Documents' bulk lines as one buffer: document `k` ends at `ends[k]` and came from line `lines[k]`. */
export interface PooledBlock {
  body: Buffer;
  ends: Uint32Array;
  lines: Float64Array;
}

export type ParseReply =
  | { job: number; rows: number; blankLines: number; blocks: PooledBlock[]; lineIndex?: PooledLineIndex }
  | { job: number; ids: string[] }
  | { job: number; error: { message: string; file?: string; line?: number; load: boolean } };

export interface ParseResult {
  rows: number;
  blankLines: number;
  blocks: PooledBlock[];
  lineIndex?: PooledLineIndex;
}

export interface ParseOptions {
  /** The first-seen instants the previous index holds for these ids (those it lacks left out). */
  firstSeen?: (ids: string[]) => Promise<Map<string, string>>;
  /** Drops the job while it is still queued; a job a worker holds runs on and is ignored. */
  signal?: AbortSignal;
}

interface Job {
  request: ParseRequest;
  options: ParseOptions;
  resolve(result: ParseResult): void;
  reject(error: unknown): void;
  /** The worker asked for first-seen instants: its chunk is parsed, only the bulk text is left. */
  looked?: boolean;
  /** Called once a worker has it. */
  dispatched?: () => void;
}

interface Slot {
  worker: Worker;
  /** Jobs it was given and has not answered. */
  jobs: Set<Job>;
  /** Chunks it is parsing (jobs waiting for a lookup excluded): it is idle at 0. */
  parsing: number;
}

/**
 * Worker threads a load uses: `LOAD_WORKERS` when set (0: none), else one per core but one (the
 * loader's own thread), at most MAX_WORKERS, and none at all on machines of fewer than MIN_CORES
 * cores, where the cores are better left to Elasticsearch and the loader's thread.
 *
 * MAX_WORKERS because each worker costs memory (its isolate, the type-stripped modules, a
 * heap: about 45 MB of peak RSS each under load), and the load must stay under 300 MB; two
 * workers already parse rows several times faster than the one thread did, beside it.
 */
export const MIN_CORES = 4;
export const MAX_WORKERS = 2;
export function poolSize(setting: number | undefined, cores = availableParallelism()): number {
  if (setting !== undefined) return setting;
  return cores < MIN_CORES ? 0 : Math.min(MAX_WORKERS, cores - 1);
}

/**
 * A worker's heap: V8 lets an isolate's old generation grow far before collecting it, and
 * each worker then held tens of megabytes it did not need (4 workers parsing events: peak RSS
 * 446 MB, 342 MB with this cap, at the same rows/s). A chunk's rows need a few megabytes.
 */
export const WORKER_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: 64 };

/** Files smaller than this load on the loader's thread: starting workers and handing chunks over would not pay. */
export const POOL_MIN_FILE_BYTES = 8 * 1024 ** 2;

/** The original reason of a LoadError's message (its `file:line: ` prefix removed). */
function reasonOf(message: string, file?: string, line?: number): string {
  const at = file === undefined ? '' : line === undefined ? `${file}: ` : `${file}:${line}: `;
  return message.startsWith(at) ? message.slice(at.length) : message;
}

export class ParsePool {
  readonly size: number;
  readonly #cycleStarts: readonly CycleStart[];
  readonly #slots: Slot[] = [];
  readonly #queue: Job[] = [];
  readonly #jobs = new Map<number, Job>();
  #next = 0;
  #closed = false;

  readonly #limits: ResourceLimits | undefined;

  constructor(size: number, cycleStarts: readonly CycleStart[], limits: ResourceLimits | undefined = WORKER_LIMITS) {
    this.#limits = limits;
    if (!Number.isSafeInteger(size) || size < 1) throw new RangeError(`a parse pool needs at least one worker, got ${size}`);
    this.size = size;
    this.#cycleStarts = cycleStarts;
  }

  /** Workers started so far. */
  get started(): number {
    return this.#slots.length;
  }

  /** Parses one chunk on a worker; rejects with a LoadError naming `file:line` for a bad line. */
  parse(request: Omit<ParseRequest, 'job'>, options: ParseOptions = {}): Promise<ParseResult> {
    if (this.#closed) return Promise.reject(new Error('the parse pool is closed'));
    options.signal?.throwIfAborted();
    return new Promise<ParseResult>((resolve, reject) => {
      const job: Job = { request: { ...request, job: this.#next++ }, options, resolve, reject };
      this.#jobs.set(job.request.job, job);
      this.#queue.push(job);
      if (options.signal) {
        const { signal } = options;
        const dropped = () => {
          const at = this.#queue.indexOf(job);
          if (at === -1) return;
          this.#queue.splice(at, 1);
          this.#jobs.delete(job.request.job);
          reject(signal.reason);
        };
        signal.addEventListener('abort', dropped, { once: true });
        // Listening ends once a worker has the job: a file's signal sees hundreds of chunks.
        job.dispatched = () => signal.removeEventListener('abort', dropped);
      }
      this.#pump();
    });
  }

  /** Stops every worker; jobs not answered yet fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const error = new Error('the parse pool is closed');
    for (const job of this.#jobs.values()) job.reject(error);
    this.#jobs.clear();
    this.#queue.length = 0;
    await Promise.all(this.#slots.splice(0).map((slot) => slot.worker.terminate()));
  }

  #pump(): void {
    while (this.#queue.length > 0) {
      let slot = this.#slots.find((s) => s.parsing === 0);
      if (!slot && this.#slots.length < this.size) slot = this.#start();
      if (!slot) return;
      const job = this.#queue.shift()!;
      job.dispatched?.();
      slot.parsing += 1;
      slot.jobs.add(job);
      const { bytes } = job.request;
      // A copy of exactly the chunk, moved to the worker: a view of a larger buffer would be cloned whole.
      const own = new Uint8Array(bytes.byteLength);
      own.set(bytes);
      slot.worker.postMessage({ type: 'parse', request: { ...job.request, bytes: own } }, [own.buffer]);
    }
  }

  #start(): Slot {
    const worker = new Worker(new URL('./parse-worker.ts', import.meta.url), { workerData: { cycleStarts: this.#cycleStarts }, resourceLimits: this.#limits });
    // An idle pool never keeps the process alive (the load closes it anyway).
    worker.unref();
    const slot: Slot = { worker, jobs: new Set(), parsing: 0 };
    this.#slots.push(slot);
    worker.on('message', (reply: ParseReply) => this.#answer(slot, reply));
    const died = (error: unknown) => {
      const at = this.#slots.indexOf(slot);
      if (at !== -1) this.#slots.splice(at, 1);
      for (const job of slot.jobs) {
        this.#jobs.delete(job.request.job);
        job.reject(error);
      }
      slot.jobs.clear();
      if (!this.#closed) this.#pump();
    };
    worker.on('error', (error: Error & { code?: string }) =>
      // A chunk holding a line of very many megabytes can outgrow WORKER_LIMITS: the loader's thread has no such cap.
      died(error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? new Error(`a parse worker ran out of memory (${error.message}); LOAD_WORKERS=0 parses on the loader's thread`) : error),
    );
    worker.on('exit', (code) => died(new Error(`a parse worker stopped (exit code ${code})`)));
    return slot;
  }

  #answer(slot: Slot, reply: ParseReply): void {
    const job = this.#jobs.get(reply.job);
    if (!job) return;
    if ('ids' in reply) {
      // The worker is free while the loader's thread looks the ids up.
      job.looked = true;
      slot.parsing -= 1;
      this.#pump();
      job.options
        .firstSeen!(reply.ids)
        .then((found) => slot.worker.postMessage({ type: 'seen', job: reply.job, seen: reply.ids.map((id) => found.get(id) ?? null) }))
        .catch((error: unknown) => {
          this.#jobs.delete(reply.job);
          slot.jobs.delete(job);
          slot.worker.postMessage({ type: 'seen', job: reply.job, seen: [], drop: true });
          job.reject(error);
        });
      return;
    }
    this.#jobs.delete(reply.job);
    slot.jobs.delete(job);
    if (!job.looked) slot.parsing -= 1;
    this.#pump();
    if ('error' in reply) {
      const { message, file, line, load } = reply.error;
      job.reject(load ? new LoadError(reasonOf(message, file, line), { file, line }) : new Error(message));
      return;
    }
    const blocks = reply.blocks.map((b) => ({ body: Buffer.from(b.body.buffer, b.body.byteOffset, b.body.byteLength), ends: b.ends, lines: b.lines }));
    job.resolve({ rows: reply.rows, blankLines: reply.blankLines, blocks, lineIndex: reply.lineIndex });
  }
}
