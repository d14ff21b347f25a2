/** The one error a load fails with: a reason, and the `file:line` it concerns when there is one. */
export class LoadError extends Error {
  override name = 'LoadError';
  readonly file: string | undefined;
  readonly line: number | undefined;
  /** The source could not be read for a while (retries exhausted): another try may succeed. */
  readonly transient: boolean;

  constructor(reason: string, where: { file?: string; line?: number; transient?: boolean } = {}) {
    const at = where.file === undefined ? '' : where.line === undefined ? `${where.file}: ` : `${where.file}:${where.line}: `;
    super(`${at}${reason}`);
    this.file = where.file;
    this.line = where.line;
    this.transient = where.transient ?? false;
  }
}

/**
 * An update found its file mostly changed (plan.ts `updateStillPays`): building the index anew
 * costs less than going on. Not a failure: the load builds the index instead.
 */
export class RebuildInstead extends Error {
  override name = 'RebuildInstead';
}
