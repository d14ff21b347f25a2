/**
 * `/v1/autocomplete`: entities for the text typed so far, as a request body. Pure.
 *
 * A row matches when its name or display name has every complete word (one typo allowed in
 * words of four letters or more) and a word starting with the last one typed, or when the text
 * is its exact id or slug. Ranked in tiers, each far above the next so BM25 cannot reorder them:
 * an exact id or slug; a name that starts with the text (case-insensitive, on the folded
 * `.exact` keyword); then by relevance. Ties: label, then id. The prefix of the last word reads
 * `index_prefixes` (up to 10 characters), so a keystroke costs no term expansion.
 */
import { type Query, type SearchBody, environmentScope, oneOf } from './list.ts';
import type { AnyOf } from './params.ts';
import type { CycleScope } from './scope.ts';

/** Suggestions answered at most. */
export const SUGGESTIONS = 10;
/** Levenshtein distance by word length: 0 below four letters, one typo from four on. */
const ONE_TYPO_FROM_FOUR = 'AUTO:4,1000';

const NAME_FIELDS = ['name', 'displayName'] as const;

export interface AutocompleteParams {
  q: string;
  environment: string;
  scope: CycleScope;
  entityType?: AnyOf;
}

const tier = (boost: number, query: Query): Query => ({ constant_score: { filter: query, boost } });

export function toAutocompleteBody(params: AutocompleteParams, currentCycle: number): SearchBody {
  const text = params.q;
  const folded = text.toLowerCase();
  const filter = environmentScope(params.environment, params.scope, currentCycle);
  if (params.entityType !== undefined) filter.push(oneOf('entityType', params.entityType));
  const byId: Query = { bool: { should: [{ term: { id: text } }, { term: { slug: text } }], minimum_should_match: 1 } };
  const matches: Query[] = [
    byId,
    // Complete words with a typo each, the last word as a prefix.
    ...NAME_FIELDS.map((f) => ({ match_bool_prefix: { [f]: { query: text, operator: 'and' as const, fuzziness: ONE_TYPO_FROM_FOUR, max_expansions: 20 } } })),
    // Every word complete, the last one with a typo too ("vesan" for "vesna").
    ...NAME_FIELDS.map((f) => ({ match: { [f]: { query: text, operator: 'and' as const, fuzziness: ONE_TYPO_FROM_FOUR, max_expansions: 20 } } })),
  ];
  const startsWith: Query = { dis_max: { queries: NAME_FIELDS.map((f) => ({ prefix: { [`${f}.exact`]: folded } })) } };
  return {
    query: {
      bool: {
        filter,
        must: [{ bool: { should: matches, minimum_should_match: 1 } }],
        should: [tier(10_000, byId), tier(1_000, startsWith)],
      },
    },
    sort: [{ _score: { order: 'desc' } }, { label: { order: 'asc' } }, { id: { order: 'asc' } }],
    size: SUGGESTIONS,
    track_total_hits: false,
  };
}
