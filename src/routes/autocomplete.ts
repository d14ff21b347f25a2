/**
 * `/v1/autocomplete?q=`: up to ten entities for a search box, as the user types, scoped like
 * `/v1/search` (src/query/autocomplete.ts says how they match and rank). Each suggestion is
 * what a box shows and links with: `{id, slug, label, entityType, hint}`, the hint telling
 * apart entities of the same name (environment, cycle, and the canonical name when the label
 * is another).
 */
import { toEnvelope } from '../http/envelope.ts';
import type { Row } from '../indices/description.ts';
import { SCORED_FILTER, SUGGESTERS, SUGGEST_FILTER, SUGGESTIONS, TYPOS_FILTER, UNSEPARATED_IDS, needsExactLookup, toAutocompleteBody, toSuggestBody, toTyposBody } from '../query/autocomplete.ts';
import { ENVIRONMENT, Q, TYPE } from '../query/route-parameters.ts';
import { CYCLE, CYCLES, scopeOf } from '../query/scope.ts';
import type { Reader } from '../search/search-service.ts';
import { type AppRouter, type RouteDeps, metaOf, requestReader } from './context.ts';
import { one, route } from './operation.ts';
import type { JsonSchema } from './records.ts';
import { generationMemo } from '../search/generation-memo.ts';

const SUGGESTION: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    slug: { type: 'string' },
    label: { type: 'string', description: 'Display name, else name, else id.' },
    entityType: { type: 'string' },
    hint: { type: 'string', description: 'What tells it apart: environment, cycle, and its name when the label is another.' },
  },
  required: ['id', 'slug', 'label', 'entityType', 'hint'],
  additionalProperties: false,
};

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value : undefined);

type Option = { _score?: number; text?: string; _source?: { row: Row } };

/** A suggester's options by score (their weights set ties apart by id: `suggestWeight`), the rare tie left by label then id. */
function inRank(suggestions: unknown): Option[] {
  const options = ((suggestions ?? []) as { options?: Option[] }[]).flatMap((s) => s.options ?? []);
  // Each option's key worked out once, not on every comparison (a sort makes ~4 per option).
  const keyed = options.map((option) => ({ option, score: option._score ?? 0, label: labelOf(option._source?.row ?? {}).toLowerCase(), id: String(option._source?.row.id) }));
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return keyed.sort((a, b) => b.score - a.score || order(a.label, b.label) || order(a.id, b.id)).map((k) => k.option);
}

/** What a box shows for an entity row: display name, else name, else id. */
function labelOf(row: Row): string {
  return text(row.displayName) ?? text(row.name) ?? String(row.id);
}

/** A suggestion of an entity row. */
export function suggestionOf(row: Row) {
  const id = String(row.id);
  const label = labelOf(row);
  const name = text(row.name);
  const cycle = Number.isInteger(row.cycle) && (row.cycle as number) >= 1 ? `cycle ${row.cycle}` : 'uncycled';
  const hint = [text(row.environment) ?? 'unknown', cycle, ...(name !== undefined && name !== label ? [name] : [])].join(' · ');
  return { id, slug: text(row.slug) ?? id, label, entityType: text(row.entityType) ?? text(row.type) ?? 'unknown', hint };
}

/** Per generation, whether every entity id holds a `:` and every slug a `-` (counted once: `UNSEPARATED_IDS`); autocomplete reads the live generation, and around a swap the one before it. */
function separatedIds(): (reader: Reader) => Promise<boolean> {
  const memo = generationMemo((reader: Reader) => reader.count('entities', UNSEPARATED_IDS).then((count) => count === 0), () => '', 2);
  return (reader) => memo(reader, undefined);
}

export function autocompleteRoutes(router: AppRouter, deps: RouteDeps): void {
  const everySeparated = separatedIds();
  const query = [Q, ENVIRONMENT, CYCLES, CYCLE, TYPE] as const;
  const operation = {
    summary: 'Entities for the text typed so far (at most 10)',
    description:
      'Without `q`: no suggestions. Every complete word must be in the name or display name (one typo allowed in words of four letters or more) and the last word starts one; an exact id or slug matches too. Order: exact id or slug, names starting with the text, then relevance. Scoped like `/v1/search`.',
    query,
    answer: one({ type: 'array', items: SUGGESTION, maxItems: 10 }),
  };
  route(router, '/v1/autocomplete', operation, async (ctx, params) => {
    // An empty box suggests nothing (not an error: it is where every typing starts).
    if (params.q === undefined) {
      ctx.body = toEnvelope([], metaOf(ctx, deps));
      return;
    }
    const reader = await requestReader(ctx, deps.search);
    const exact = needsExactLookup(params.q, await everySeparated(reader));
    const asked = { q: params.q, environment: params.environment ?? deps.config.defaultEnvironment, scope: scopeOf(params), entityType: params.type, exact };
    const { currentCycle } = reader.generation;
    const rows = new Map<string, Row>();
    const add = (row: Row | undefined) => {
      if (row && rows.size < SUGGESTIONS && !rows.has(String(row.id))) rows.set(String(row.id), row);
    };
    // Filtered answers leave out what has nothing under it: no hits, no `hits`.
    const found = await reader.search<{ row: Row }>('entities', { ...toSuggestBody(asked, currentCycle), filter_path: SUGGEST_FILTER });
    for (const hit of found.hits?.hits ?? []) add(hit._source?.row);
    for (const option of inRank(found.suggest?.[SUGGESTERS.starts])) add(option._source?.row);
    // Fewer than ten: completions with one typo, then the scored query (words in any order, a
    // typo in each). Both at once: nine in ten keystrokes that need the first need the second.
    if (rows.size < SUGGESTIONS) {
      const [typos, scored] = await Promise.all([
        reader.search<{ row: Row }>('entities', { ...toTyposBody(asked, currentCycle), filter_path: TYPOS_FILTER }),
        reader.search<{ row: Row }>('entities', { ...toAutocompleteBody(asked, currentCycle), filter_path: SCORED_FILTER }),
      ]);
      for (const option of inRank(typos.suggest?.[SUGGESTERS.typos])) add(option._source?.row);
      for (const hit of scored.hits?.hits ?? []) add(hit._source?.row);
    }
    ctx.body = toEnvelope([...rows.values()].map(suggestionOf), metaOf(ctx, deps));
  });
}
