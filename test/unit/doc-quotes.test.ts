/**
 * The documentation quotes whole files (a `<!-- file: path -->` line, then a fenced block): each
 * quote must be that file byte for byte, so the documentation cannot drift from code that is
 * type-checked and run (the client recipe of docs/client-tests.md: examples/testcontainers, run by
 * test/integration/client-recipe.test.ts).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ELASTICSEARCH_IMAGE } from '../../examples/testcontainers/registry-gateway.ts';
import { ES_VERSION } from '../../scripts/elasticsearch.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DOC = readFileSync(path.join(ROOT, 'docs', 'client-tests.md'), 'utf8');

/** Each quoted file: its path and the block's text (with its final newline). */
function quotes(markdown: string): { file: string; block: string }[] {
  return [...markdown.matchAll(/^<!-- file: (\S+) -->\n```\w*\n([\s\S]*?)^```$/gm)].map((m) => ({ file: m[1]!, block: m[2]! }));
}

describe('files the documentation quotes', () => {
  it('finds the quotes it checks (the check itself works)', () => {
    expect(quotes('<!-- file: a.ts -->\n```ts\nconst a = 1;\n```\n')).toEqual([{ file: 'a.ts', block: 'const a = 1;\n' }]);
    expect(quotes(DOC).map((q) => q.file)).toEqual(['examples/testcontainers/registry-gateway.ts', 'examples/testcontainers/entities.test.ts']);
  });

  it.each(quotes(DOC))('$file is quoted as it is', ({ file, block }) => {
    expect(block).toBe(readFileSync(path.join(ROOT, file), 'utf8'));
  });

  it("the recipe's default Elasticsearch is the version the project provisions and tests", () => {
    expect(ELASTICSEARCH_IMAGE).toBe(`docker.elastic.co/elasticsearch/elasticsearch:${ES_VERSION}`);
  });
});
