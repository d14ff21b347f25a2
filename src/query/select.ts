/**
 * `select=a,b`: only these top-level fields of each row, plus `id` (when the row has one), as
 * OpenAlex's `select` does. The fields a route's records can have are declared with the route
 * (its record schema) and are the alternatives of its pattern, so a field they never have is a
 * 400 naming the fields there are, rather than rows of `{id}`.
 */
import { literalPattern, queryParameter } from './parameters.ts';

/** `select` of a route whose records have these top-level fields. */
export function selectParameter(fields: readonly string[]) {
  // A field name, as the validator takes it: trimmed, one of the record's.
  const name = `\\s*(?:${fields.map(literalPattern).join('|')})\\s*`;
  return queryParameter('select', {
    description: `Only these top-level fields of each row, comma-separated (\`id\` is always kept): any of \`${fields.join('`, `')}\`. Not with \`group_by\`.`,
    schema: { type: 'string', pattern: `^${name}(?:,${name})*$`, examples: fields.slice(0, 2) },
    expects: `a comma-separated list of: ${fields.join(', ')}`,
    excludes: 'group_by',
    // The pattern admits only the record's fields.
    convert: (text): readonly string[] => [...new Set(text.split(',').map((name) => name.trim()))],
  });
}

/** The selected fields of a row (`id` first when present), in the order asked. */
export function selectFields(row: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  if ('id' in row) picked.id = row.id;
  for (const field of fields) if (field in row) picked[field] = row[field];
  return picked;
}
