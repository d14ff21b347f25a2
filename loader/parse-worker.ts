/**
 * A worker thread of the parse pool (parse-pool.ts): turns a chunk of a file's lines into bulk
 * bytes — splits and checks the lines (UTF-8, blank), hashes, parses and checks each row, builds
 * its document (row-document.ts, as the loader's own thread does) — and hands back the bodies as
 * blocks of about `flushBytes`, moved (transferred), not copied. Documents that carry a first-seen
 * instant from the previous index wait for the ids the loader's thread looks up.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { CycleStart } from '../src/config.ts';
import { INDICES } from '../src/indices/all.ts';
import type { IndexDescription, LoadContext } from '../src/indices/description.ts';
import { LoadError } from './errors.ts';
import { BlockCutter, encodeBlocks, entryOf, lineDigest, rowHashText } from './line-index.ts';
import type { ParseReply, ParseRequest, PooledBlock, PooledLineIndex } from './parse-pool.ts';
import { rowLinesOf } from './read-lines.ts';
import { type BuiltRow, bulkLines, parseRow } from './row-document.ts';

const { cycleStarts } = workerData as { cycleStarts: readonly CycleStart[] };
const port = parentPort!;

/** Descriptions that read other indices (`prepare`) are never sent here: the lookups only say so. */
const context: LoadContext = {
  cycleStarts,
  lookupEntities: () => Promise.reject(new Error('no lookups on a parse worker')),
  lookupNpcKills: () => Promise.reject(new Error('no lookups on a parse worker')),
  lookupTribes: () => Promise.reject(new Error('no lookups on a parse worker')),
};

const byName = new Map<string, IndexDescription<any>>(INDICES.map((d) => [d.name, d as IndexDescription<any>]));

interface Parsed {
  request: ParseRequest;
  description: IndexDescription<any>;
  built: BuiltRow[];
  bytes: Buffer[];
  lines: number[];
  hashes: string[];
  rows: number;
  blankLines: number;
  lineIndex?: PooledLineIndex;
}

/** Rows waiting for their first-seen instants, by job. */
const waiting = new Map<number, Parsed>();

function parse(request: ParseRequest): Parsed {
  const description = byName.get(request.index);
  if (!description) throw new Error(`no index description named ${request.index}`);
  const shapeChecked = description.requiredFields.length > 0;
  const chunk = Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength);
  const parsed: Parsed = { request, description, built: [], bytes: [], lines: [], hashes: [], rows: 0, blankLines: 0 };
  const cutter = request.lineIndex ? new BlockCutter(chunk) : undefined;
  for (const { text, bytes, line, end, blank } of rowLinesOf({ bytes: chunk, firstLine: request.firstLine, lines: 0 }, request.file, shapeChecked)) {
    if (blank) {
      parsed.blankLines += 1;
      cutter?.line(end, undefined);
      continue;
    }
    parsed.rows += 1;
    const built = parseRow(text, line, request.file, description, context);
    const digest = lineDigest(bytes);
    parsed.built.push(built);
    parsed.bytes.push(bytes);
    parsed.lines.push(line);
    parsed.hashes.push(rowHashText(digest));
    cutter?.line(end, entryOf(digest, built.doc.id));
  }
  if (cutter) {
    cutter.cut();
    parsed.lineIndex = { bytes: encodeBlocks(cutter.out), blocks: cutter.out.length, entries: cutter.out.reduce((n, b) => n + b.entries, 0) };
  }
  return parsed;
}

/** The documents' bulk lines, in blocks of at least `flushBytes` (the last one smaller), each one buffer of its own. */
function blocks(parsed: Parsed, seen?: readonly (string | null)[]): PooledBlock[] {
  const { request, description, built } = parsed;
  const out: PooledBlock[] = [];
  let pieces: Buffer[] = [];
  let ends: number[] = [];
  let lines: number[] = [];
  let size = 0;
  const flush = () => {
    const body = Buffer.allocUnsafeSlow(size);
    let at = 0;
    for (const piece of pieces) at += piece.copy(body, at);
    out.push({ body, ends: Uint32Array.from(ends), lines: Float64Array.from(lines) });
    pieces = [];
    ends = [];
    lines = [];
    size = 0;
  };
  for (let i = 0; i < built.length; i++) {
    const firstSeen = description.firstSeen === true ? (seen?.[i] ?? request.indexedAt) : undefined;
    for (const piece of bulkLines(built[i]!, parsed.bytes[i]!, parsed.lines[i]!, parsed.hashes[i]!, request.versionBase, description, firstSeen)) {
      pieces.push(piece);
      size += piece.length;
    }
    ends.push(size);
    lines.push(parsed.lines[i]!);
    if (size >= request.flushBytes) flush();
  }
  if (ends.length > 0) flush();
  return out;
}

function finish(job: number, parsed: Parsed, seen?: readonly (string | null)[]): void {
  const out = blocks(parsed, seen);
  const { lineIndex } = parsed;
  const reply: ParseReply = { job, rows: parsed.rows, blankLines: parsed.blankLines, blocks: out, lineIndex };
  // The line index's bytes are copied (its buffer may be a slice of Node's pool); the bodies are moved.
  port.postMessage(reply, out.flatMap((b) => [b.body.buffer as ArrayBuffer, b.ends.buffer as ArrayBuffer, b.lines.buffer as ArrayBuffer]));
}

function fail(job: number, error: unknown): void {
  waiting.delete(job);
  const reply: ParseReply =
    error instanceof LoadError
      ? { job, error: { message: error.message, file: error.file, line: error.line, load: true } }
      : { job, error: { message: (error as Error)?.message ?? String(error), load: false } };
  port.postMessage(reply);
}

port.on('message', (message: { type: 'parse'; request: ParseRequest } | { type: 'seen'; job: number; seen: (string | null)[]; drop?: boolean }) => {
  if (message.type === 'parse') {
    const { request } = message;
    try {
      const parsed = parse(request);
      if (request.lookup && parsed.built.length > 0) {
        waiting.set(request.job, parsed);
        const reply: ParseReply = { job: request.job, ids: parsed.built.map((b) => b.doc.id) };
        port.postMessage(reply);
        return;
      }
      finish(request.job, parsed);
    } catch (error) {
      fail(request.job, error);
    }
    return;
  }
  const parsed = waiting.get(message.job);
  waiting.delete(message.job);
  // The lookup failed: the load stops, the rows are not wanted.
  if (!parsed || message.drop) return;
  try {
    finish(message.job, parsed, message.seen);
  } catch (error) {
    fail(message.job, error);
  }
});
