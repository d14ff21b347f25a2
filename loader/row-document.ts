/**
 * How one exported line becomes its bulk action and source lines: parsed, checked, turned into
 * its document by the index description, and written as bytes. One module for both ways a file
 * loads — on the loader's thread (read-on-thread.ts, update-over-line-index.ts) and on a worker thread (parse-worker.ts) — so
 * both write the very same documents.
 */
import { FIRST_SEEN, type IndexDescription, type LoadContext, ROW_HASH, RowError, documentId, rowsInDocValues, toBulkLines } from '../src/indices/description.ts';
import { LoadError } from './errors.ts';
import { lineDigest, rowHashText } from './line-index.ts';

/**
 * The hash of an exported line that documents carry (ROW_HASH): 66 bits of the sha1 of its
 * UTF-8 bytes, as text. Hashing the bytes read spares encoding the decoded text once more.
 */
export function lineHash(bytes: Buffer): string {
  return rowHashText(lineDigest(bytes));
}

function isMissing(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '') || (Array.isArray(value) && value.length === 0);
}

export type RowDocument = { id: string; cycle?: number; row: unknown };

/** A line's row and document. */
export interface BuiltRow {
  record: Record<string, unknown>;
  doc: RowDocument;
}

/** A line → its row and document, or a LoadError naming `file:line`. */
export function parseRow(text: string, line: number, file: string, description: IndexDescription<any>, context: LoadContext): BuiltRow {
  let row: unknown;
  try {
    row = JSON.parse(text);
  } catch (error) {
    throw new LoadError(`invalid JSON (${(error as Error).message})`, { file, line });
  }
  if (row === null || typeof row !== 'object' || Array.isArray(row)) {
    throw new LoadError('a row must be a JSON object', { file, line });
  }
  const record = row as Record<string, unknown>;
  const missing = description.requiredFields.find((field) => isMissing(record[field]));
  if (missing !== undefined) throw new LoadError(`missing required field "${missing}"`, { file, line });
  try {
    return { record, doc: description.toDocument(record, context) };
  } catch (error) {
    if (error instanceof RowError) throw new LoadError(error.message, { file, line });
    throw error;
  }
}

/**
 * The bulk lines of a finished document, written with the external version `versionBase + line`
 * (load-file.ts `FileJob.sequence`). The exported line is its row, unless the description put a view
 * there; `firstSeen` is given for descriptions that carry it (FIRST_SEEN).
 */
export function bulkLines(built: BuiltRow, bytes: Buffer, line: number, rowHash: string, versionBase: number, description: IndexDescription<any>, firstSeen?: string): Buffer[] {
  const { row, ...fields } = built.doc as { row: unknown; [field: string]: unknown };
  fields[ROW_HASH] = rowHash;
  if (description.firstSeen === true) fields[FIRST_SEEN] = firstSeen;
  const action = `{"index":{"_id":${JSON.stringify(documentId(built.doc.id))},"version":${versionBase + line},"version_type":"external"}}\n`;
  return toBulkLines(action, fields, row, bytes, row === built.record, description.keepsLine, rowsInDocValues(description.mapping));
}
