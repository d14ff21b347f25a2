/**
 * Load progress: a bar per file on a terminal (cli-progress: rows, rows/s, ETA; one bar under
 * another while files load side by side), plain log lines elsewhere (CI, Docker, tests), so
 * logs stay readable when nobody watches.
 */
import { MultiBar } from 'cli-progress';

export interface FileProgress {
  /** Rows done (one unless said: an update skips runs of unchanged lines at once). */
  increment(count?: number): void;
  done(line: string): void;
}

export interface Progress {
  file(name: string, totalRows: number): FileProgress;
  log(line: string): void;
}

/** Reports nothing: for callers that only want the summary (tests, benchmarks). */
export const silentProgress: Progress = {
  file: () => ({ increment() {}, done() {} }),
  log() {},
};

function rate(rows: number, since: number): number {
  const seconds = (performance.now() - since) / 1000;
  return seconds > 0 ? Math.round(rows / seconds) : 0;
}

/** Bars on a TTY, otherwise a line per file and one every `everyMs` while a file loads. */
export function createProgress(options: { tty: boolean; write: (line: string) => void; everyMs?: number }): Progress {
  const { tty, write, everyMs = 5000 } = options;
  // The bars of the files loading now; lines written meanwhile go above them.
  let bars: MultiBar | undefined;
  let active = 0;
  const log = (line: string) => (bars ? bars.log(`${line}\n`) : write(line));
  return {
    log,
    file(name, totalRows) {
      const started = performance.now();
      let rows = 0;
      let shown = 0;
      if (tty) {
        bars ??= new MultiBar({ barCompleteChar: '█', barIncompleteChar: '░', hideCursor: true, etaBuffer: 50_000, fps: 5 });
        const owner = bars;
        active += 1;
        const bar = owner.create(totalRows, 0, { speed: 0 }, { format: `  ${name.padEnd(26)} {bar} {value}/{total} rows | {speed} rows/s | ETA {eta_formatted}` });
        return {
          increment(count = 1) {
            rows += count;
            if (rows - shown >= 500) {
              shown = rows;
              bar.update(rows, { speed: rate(rows, started) });
            }
          },
          done(line) {
            bar.update(rows, { speed: rate(rows, started) });
            owner.remove(bar);
            active -= 1;
            if (active === 0) {
              owner.stop();
              bars = undefined;
            }
            log(line);
          },
        };
      }
      let next = started + everyMs;
      return {
        increment(count = 1) {
          rows += count;
          if (rows - shown >= 1000 && performance.now() >= next) {
            shown = rows;
            next = performance.now() + everyMs;
            write(`  ${name}: ${rows}/${totalRows} rows, ${rate(rows, started)} rows/s, RSS ${Math.round(process.memoryUsage.rss() / 2 ** 20)} MB`);
          }
        },
        done: write,
      };
    },
  };
}
