/** The one error a load fails with: a reason, and the `file:line` it concerns when there is one. */
export class LoadError extends Error {
  override name = 'LoadError';
  readonly file: string | undefined;
  readonly line: number | undefined;

  constructor(reason: string, where: { file?: string; line?: number } = {}) {
    const at = where.file === undefined ? '' : where.line === undefined ? `${where.file}: ` : `${where.file}:${where.line}: `;
    super(`${at}${reason}`);
    this.file = where.file;
    this.line = where.line;
  }
}
