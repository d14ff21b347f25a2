/**
 * Rows of one file → the bulk items a way of writing sends (bulk-sender.ts), the same for every
 * way: each document carries the hash of its line (ROW_HASH) and the external version
 * `sequence · 2³² + line`; documents of `firstSeen` indices keep the instant the previous index
 * holds for their id, new ids get `indexedAt`.
 *
 * Each bulk line is assembled as bytes: the document's indexed fields serialized, then the
 * exported line's own bytes as `row` (it parsed, so it is JSON): the row is never serialized,
 * nor even encoded, again.
 */
import type { IndexDescription, LoadContext } from '../src/indices/description.ts';
import type { BulkItem } from './bulk-sender.ts';
import type { PooledBlock } from './parse-pool.ts';
import type { PreviousIndex } from './previous-index.ts';
import type { FileProgress } from './progress.ts';
import { type BuiltRow, bulkLines, parseRow } from './row-document.ts';

/** What is sent: the action and source lines as bytes, and where they came from (the first line of a block). */
export interface Pending extends BulkItem {
  line: number;
}

/** A parsed row whose document may still wait for lookups (`RowItems.items`). */
export type Waiting = BuiltRow & { bytes: Buffer; line: number; hash: string };

export interface RowItemsOptions {
  file: { path: string };
  description: IndexDescription<any>;
  context: LoadContext;
  progress: FileProgress;
  /** The live index of the same name: where first-seen instants are read. */
  previous?: PreviousIndex;
  /** `indexedAt` of rows no previous generation held. */
  indexedAt: string;
  /** This load's number (load-file.ts `FileJob.sequence`). */
  sequence: number;
}

export class RowItems {
  /** Documents turned into bulk items so far: what Elasticsearch must acknowledge. */
  written = 0;
  /** Documents read more before they are final: other rows of the generation (`prepare`), first-seen instants of the previous index. */
  readonly waits: boolean;
  readonly versionBase: number;
  readonly carries: boolean;
  /** The description requires fields: a blank line is then one to report, not to skip (read-lines.ts). */
  readonly shapeChecked: boolean;

  readonly #options: RowItemsOptions;

  constructor(options: RowItemsOptions) {
    this.#options = options;
    const { description, previous, sequence } = options;
    this.carries = description.firstSeen === true;
    this.waits = description.prepare !== undefined || (this.carries && previous !== undefined);
    this.versionBase = sequence * 2 ** 32;
    this.shapeChecked = description.requiredFields.length > 0;
  }

  /** A line's row and document (a LoadError naming `file:line` when it cannot be one). */
  parse(text: string, line: number): BuiltRow {
    const { file, description, context } = this.#options;
    return parseRow(text, line, file.path, description, context);
  }

  /** The bulk item of a finished document. The exported line is its row, unless the description put a view there. */
  item(built: BuiltRow, bytes: Buffer, line: number, rowHash: string, firstSeen?: string): Pending {
    const { description, indexedAt, progress } = this.#options;
    this.written += 1;
    progress.increment();
    const pieces = bulkLines(built, bytes, line, rowHash, this.versionBase, description, this.carries ? (firstSeen ?? indexedAt) : undefined);
    return { pieces, bytes: pieces.reduce((n, piece) => n + piece.length, 0), line };
  }

  /** Parsed rows → their bulk items, once what they wait for is read (one request each per batch). */
  async items(waiting: Waiting[]): Promise<Pending[]> {
    const toItem = ({ bytes, line, hash, ...built }: Waiting, firstSeen?: string) => this.item(built, bytes, line, hash, firstSeen);
    if (!this.waits) return waiting.map((w) => toItem(w));
    if (waiting.length === 0) return [];
    const { description, context, previous } = this.#options;
    // Killmail actors from this generation's entities and relations, first-seen instants from the previous index.
    const [seen] = await Promise.all([
      this.carries && previous ? previous.firstSeen(waiting.map((w) => w.doc.id)) : undefined,
      description.prepare?.(waiting.map((w) => w.doc), context),
    ]);
    return waiting.map((w) => toItem(w, seen?.get(w.doc.id)));
  }

  /** Lines the index already holds: counted, not sent. */
  skipped(lines = 1): void {
    this.#options.progress.increment(lines);
  }

  /** A parse worker's block of documents as one bulk item; each document can still stand alone (retries, refusals). */
  block(block: PooledBlock): Pending {
    const { body, ends, lines } = block;
    this.written += ends.length;
    this.#options.progress.increment(ends.length);
    return {
      pieces: [body],
      bytes: body.length,
      documents: ends.length,
      line: lines[0]!,
      document(k) {
        const piece = body.subarray(k === 0 ? 0 : ends[k - 1], ends[k]);
        return { pieces: [piece], bytes: piece.length, line: lines[k]! } as Pending;
      },
    };
  }
}
