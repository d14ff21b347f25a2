/**
 * The work no loader can skip, on a thread of its own: read one bundle file (gunzip included),
 * check its sha256, size and row count, decode and check each line's UTF-8, parse it as JSON
 * and hash it (the row hash an update compares). The loader bench runs it beside a raw `_bulk`
 * replay of the same file, so that the two share the cores as a loader and Elasticsearch do:
 * what that replay then takes is the best any loader of this bundle could do on this machine.
 */
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { type Bundle, openBundle } from '../loader/bundle.ts';
import { checkIntegrity, lineHash } from '../loader/load-file.ts';
import { readLines } from '../loader/read-lines.ts';
import { createObjectStore } from '../src/store/object-store.ts';

/** A worker thread, started once (its modules loaded before any clock starts), that reads the files it is given. */
export interface Floor {
  /** Does the floor's work on one file (its manifest path, `events.jsonl`); resolves with its lines. */
  run(file: string): Promise<number>;
  close(): Promise<void>;
}

export async function startFloor(dir: string): Promise<Floor> {
  const worker = new Worker(new URL(import.meta.url), { workerData: { loadFloorDir: dir } });
  const next = () =>
    new Promise<unknown>((resolve, reject) => {
      const fail = (error: Error) => reject(error);
      worker.once('error', fail);
      worker.once('message', (message) => {
        worker.off('error', fail);
        const failed = (message as { error?: string }).error;
        if (failed !== undefined) reject(new Error(failed));
        else resolve(message);
      });
    });
  await next();
  return {
    run(file) {
      const answer = next();
      worker.postMessage(file);
      return answer as Promise<number>;
    },
    async close() {
      await worker.terminate();
    },
  };
}

async function readFile(bundle: Bundle, file: string): Promise<number> {
  const entry = bundle.files.get(file);
  if (!entry) throw new Error(`${file} is not in the bundle`);
  const stream = readLines(entry);
  let lines = 0;
  for await (const batch of stream.batches) {
    for (const { text, bytes } of batch) {
      lineHash(bytes);
      JSON.parse(text);
      lines += 1;
    }
  }
  checkIntegrity(entry, stream.integrity());
  return lines;
}

if (!isMainThread && workerData?.loadFloorDir) {
  // Opened before 'ready': no file's clock pays for reading the manifest.
  const bundle = await openBundle(workerData.loadFloorDir as string, { store: createObjectStore() });
  parentPort!.on('message', (file: string) => {
    readFile(bundle, file).then(
      (lines) => parentPort!.postMessage(lines),
      (error: Error) => parentPort!.postMessage({ error: error.message }),
    );
  });
  parentPort!.postMessage('ready');
}
