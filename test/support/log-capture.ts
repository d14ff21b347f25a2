/** The gateway's pino lines, captured in memory (a pino destination is anything with `write`). */
export interface LogCapture {
  destination: { write(line: string): void };
  /** Every line so far, parsed. */
  lines(): Record<string, any>[];
  /** Lines whose message starts with `msg`. */
  find(msg: string): Record<string, any>[];
}

export function captureLog(): LogCapture {
  const written: string[] = [];
  const lines = () => written.flatMap((chunk) => chunk.split('\n').filter(Boolean).map((line) => JSON.parse(line)));
  return {
    destination: { write: (line) => void written.push(line) },
    lines,
    find: (msg) => lines().filter((line) => typeof line.msg === 'string' && line.msg.startsWith(msg)),
  };
}
