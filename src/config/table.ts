/**
 * The README's configuration table, generated from the declarations: `npm run docs:config`
 * (scripts/config-table.ts) rewrites the region between the markers, and
 * test/unit/config-table.test.ts fails while it differs.
 */
import { SECTIONS } from './sections.ts';
import { type Setting, variablesOf } from './setting.ts';

/** The markers of a generated region named `name` in a Markdown file. */
const markers = (name: string) => ({ begin: `<!-- ${name}:begin -->`, end: `<!-- ${name}:end -->` });
export const { begin: TABLE_BEGIN, end: TABLE_END } = markers('config');

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

function region(text: string, name: string): { begin: number; end: number } {
  const { begin: open, end: close } = markers(name);
  const begin = text.indexOf(open);
  const end = text.indexOf(close);
  if (begin < 0 || end < begin) throw new Error(`no ${open} … ${close} region`);
  return { begin: begin + open.length + 1, end };
}

/** What a file holds now in its region `name`. */
export function generatedRegion(text: string, name: string): string {
  const { begin, end } = region(text, name);
  return text.slice(begin, end).replace(/\n$/, '');
}

/** The file with `content` in its region `name`, the rest as it was. */
export function withGeneratedRegion(text: string, name: string, content: string): string {
  const { begin, end } = region(text, name);
  return `${text.slice(0, begin)}${content}\n${text.slice(end)}`;
}

/** The table README.md holds now, between the markers. */
export const readmeTable = (readme: string): string => generatedRegion(readme, 'config');

/** README.md with the generated table between the markers. */
export const withConfigTable = (readme: string): string => withGeneratedRegion(readme, 'config', configTable());
