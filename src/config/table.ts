/**
 * The README's configuration table, generated from the declarations: `npm run docs:config`
 * (scripts/config-table.ts) rewrites the region between the markers, and
 * test/unit/config-table.test.ts fails while it differs.
 */
import { SECTIONS } from './sections.ts';
import { type Setting, variablesOf } from './setting.ts';

export const TABLE_BEGIN = '<!-- config:begin -->';
export const TABLE_END = '<!-- config:end -->';

const HEADER = ['| variable | default | meaning |', '|---|---|---|'];

const code = (text: string) => `\`${text}\``;

/** `AWS_REGION` (else `AWS_DEFAULT_REGION`); several variables of one value joined by " / ". */
function variablesCell(setting: Setting<unknown>): string {
  const names = variablesOf(setting).map(code).join(' / ');
  return setting.else === undefined ? names : `${names} (else ${code(setting.else)})`;
}

function defaultCell(setting: Setting<unknown>): string {
  if (setting.documented !== undefined) return setting.documented;
  if (typeof setting.default === 'function') throw new Error(`${variablesOf(setting)[0]}: a default made from other settings needs its documented text`);
  return setting.default === undefined || setting.default === '' ? '—' : code(String(setting.default));
}

interface Row {
  settings: Setting<unknown>[];
  meaning: string;
}

/** The table: one row per setting, or per group of settings sharing a row (`row`), in the sections' order; internal settings left out. */
export function configTable(settings: readonly Setting<unknown>[] = Object.values(SECTIONS).flatMap((s) => Object.values(s.settings))): string {
  const rows = new Map<string, Row>();
  for (const setting of settings.filter((s) => !s.internal)) {
    const first = variablesOf(setting)[0]!;
    if (setting.meaning !== undefined) {
      rows.set(first, { settings: [setting], meaning: setting.meaning });
    } else {
      const row = rows.get(setting.row);
      if (!row) throw new Error(`${first} joins the row of ${setting.row}, which no setting before it leads`);
      row.settings.push(setting);
    }
  }
  const cells = ({ settings: group, meaning }: Row) => [group.map(variablesCell).join(' / '), group.map(defaultCell).join(' / '), meaning];
  // A pipe inside a cell would end it.
  const lines = [...rows.values()].map((row) => `| ${cells(row).map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`);
  return [...HEADER, ...lines].join('\n');
}

function region(readme: string): { begin: number; end: number } {
  const begin = readme.indexOf(TABLE_BEGIN);
  const end = readme.indexOf(TABLE_END);
  if (begin < 0 || end < begin) throw new Error(`README.md has no ${TABLE_BEGIN} … ${TABLE_END} region`);
  return { begin: begin + TABLE_BEGIN.length + 1, end };
}

/** The table README.md holds now, between the markers. */
export function readmeTable(readme: string): string {
  const { begin, end } = region(readme);
  return readme.slice(begin, end).replace(/\n$/, '');
}

/** README.md with the generated table between the markers. */
export function withConfigTable(readme: string): string {
  const { begin, end } = region(readme);
  return `${readme.slice(0, begin)}${configTable()}\n${readme.slice(end)}`;
}
