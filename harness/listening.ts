/**
 * The line every listener of the project prints once it accepts connections — the gateway
 * (`registry gateway listening on <url>/v1`, with or without workers) and the benchmarks' own
 * servers — read in one place.
 */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

const LISTENING = /listening on (http:\/\/\S+?)\/v1/;

/** The base URL (no `/v1`) a `listening on <url>/v1` line gives; undefined for any other line. */
export function listeningUrl(line: string): string | undefined {
  return LISTENING.exec(line)?.[1];
}

/**
 * Resolves with the URL `child` says it listens on (its stdout read line by line until then);
 * rejects if it exits first, naming it `name` and adding `detail()` (what it wrote, where kept).
 * Its stdout keeps flowing after that line, to the caller's own listeners or to none: a listener
 * under load has its output drained unread, as splitting it into lines would take the load
 * generator's cores.
 */
export function whenListening(child: ChildProcess, name: string, detail: () => string = () => ''): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before listening${detail()}`)));
    const lines = createInterface({ input: child.stdout! }).on('line', (line) => {
      const url = listeningUrl(line);
      if (url === undefined) return;
      lines.close();
      // Closing the reader paused the stream.
      child.stdout!.resume();
      resolve(url);
    });
  });
}
