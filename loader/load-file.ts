/**
 * One JSONL file into one index: lines → JSON rows → documents → Elastic's bulk helper.
 *
 * Fails fast: the first bad line (invalid JSON, not an object, a required field missing, a
 * row the index description cannot use) or the first document Elasticsearch rejects stops
 * the file with `file:line`. After the last line it checks sha256, size and row count of the
 * uncompressed bytes against the manifest. It also counts `created` against `updated`
 * results, so the caller can prove the index holds one document per distinct id.
 */
import type { Client } from '@elastic/elasticsearch';
import { type IndexDescription, type LoadContext, RowError, documentId } from '../src/indices/description.ts';
import type { BundleFile } from './bundle.ts';
import { LoadError } from './errors.ts';
import type { FileProgress } from './progress.ts';
import { type Integrity, readLines } from './read-lines.ts';

export interface FileLoadResult {
  file: string;
  index: string;
  /** Rows indexed (blank lines excluded). */
  rows: number;
  blankLines: number;
  /** Distinct ids: the documents the index must hold afterwards. */
  created: number;
  /** Rows that replaced an earlier row with the same id (last row wins). */
  replaced: number;
  seconds: number;
  /** Highest cycle seen on a document. */
  maxCycle: number;
}

export interface LoadFileOptions {
  client: Client;
  file: BundleFile;
  index: string;
  description: IndexDescription<any>;
  context: LoadContext;
  progress: FileProgress;
  /** Bytes per bulk request and requests in flight (the helper's own knobs). */
  flushBytes?: number;
  concurrency?: number;
}

function isMissing(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '') || (Array.isArray(value) && value.length === 0);
}

export function checkIntegrity(file: BundleFile, actual: Integrity): void {
  for (const key of ['sha256', 'sizeBytes', 'rowCount'] as const) {
    if (actual[key] !== file[key]) {
      throw new LoadError(`${key} mismatch: manifest says ${file[key]}, the file has ${actual[key]}`, { file: file.path });
    }
  }
}

export async function loadJsonlFile(options: LoadFileOptions): Promise<FileLoadResult> {
  const { client, file, index, description, context, progress, flushBytes = 4_000_000, concurrency = 3 } = options;
  const started = performance.now();
  const stream = readLines(file.location, file.gzip);
  const shapeChecked = description.requiredFields.length > 0;
  let failure: LoadError | undefined;
  let rows = 0;
  let blankLines = 0;
  let created = 0;
  let replaced = 0;
  let maxCycle = 0;

  async function* documents() {
    try {
      for await (const { text, line } of stream.lines) {
        if (failure) return;
        if (text.trim() === '') {
          // The registry's verifier refuses blank lines only in the files it shape-checks.
          if (shapeChecked) throw new LoadError('blank line', { file: file.path, line });
          blankLines += 1;
          continue;
        }
        let row: unknown;
        try {
          row = JSON.parse(text);
        } catch (error) {
          throw new LoadError(`invalid JSON (${(error as Error).message})`, { file: file.path, line });
        }
        if (row === null || typeof row !== 'object' || Array.isArray(row)) {
          throw new LoadError('a row must be a JSON object', { file: file.path, line });
        }
        const record = row as Record<string, unknown>;
        const missing = description.requiredFields.find((field) => isMissing(record[field]));
        if (missing !== undefined) throw new LoadError(`missing required field "${missing}"`, { file: file.path, line });
        let doc: { id: string; cycle?: number };
        try {
          doc = description.toDocument(record, context);
        } catch (error) {
          if (error instanceof RowError) throw new LoadError(error.message, { file: file.path, line });
          throw error;
        }
        description.observe?.(doc, context);
        if (typeof doc.cycle === 'number' && doc.cycle > maxCycle) maxCycle = doc.cycle;
        rows += 1;
        progress.increment();
        yield { doc, line };
      }
    } catch (error) {
      failure ??= error instanceof LoadError ? error : new LoadError((error as Error).message, { file: file.path });
    }
  }

  const bulk = client.helpers.bulk({
    datasource: documents(),
    flushBytes,
    concurrency,
    onDocument: ({ doc }) => [{ index: { _index: index, _id: documentId(doc.id) } }, doc],
    onSuccess: ({ result }) => {
      if (result.index?.result === 'created') created += 1;
      else replaced += 1;
    },
    onDrop: ({ document, error, status }) => {
      const reason = error ? `${error.type}: ${error.reason ?? ''}` : `status ${status}`;
      failure ??= new LoadError(`Elasticsearch refused the row (${reason})`, { file: file.path, line: document.line });
      bulk.abort();
    },
  });
  await bulk;
  if (failure) throw failure;
  checkIntegrity(file, stream.integrity());
  return { file: file.path, index, rows, blankLines, created, replaced, seconds: (performance.now() - started) / 1000, maxCycle };
}
