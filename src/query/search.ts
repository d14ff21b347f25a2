/**
 * Relevance for `q`, better than the reference's unranked `LIKE`: BM25 over names and
 * summary, with exact matches lifted far above the rest. In order: an exact id or slug, an
 * exact name or display name (case-insensitive), a whole id or slug part, all words of the
 * name, a prefix of the last word (core `index_prefixes` via `match_bool_prefix`), then
 * typo-tolerant matches (fuzziness). `q` is only ever analysed text or a term: never query
 * syntax, never a wildcard.
 */
import type { estypes } from '@elastic/elasticsearch';
import { words } from '../indices/description.ts';
import { type Query, term } from './list.ts';

/** Fields that carry a name: `text` with `index_prefixes` and a folded `.exact` keyword. */
const NAME_FIELDS = ['name', 'displayName'] as const;

/** Relevance order of every `q` search: score, then id for a stable page order. */
export const BY_RELEVANCE: estypes.SortCombinations[] = [{ _score: { order: 'desc' } }, { id: { order: 'asc' } }];

export function toSearchQuery(q: string, extraText: readonly string[] = []): Query {
  const should: Query[] = [
    { term: { id: { value: q, boost: 1000 } } },
    { term: { slug: { value: q, boost: 1000 } } },
    ...NAME_FIELDS.map((f) => ({ term: { [`${f}.exact`]: { value: q, boost: 200 } } })),
    { term: { tokens: { value: q, boost: 50 } } },
    ...NAME_FIELDS.map((f) => ({ match: { [f]: { query: q, operator: 'and' as const, boost: 20 } } })),
    ...NAME_FIELDS.map((f) => ({ match_bool_prefix: { [f]: { query: q, boost: 8 } } })),
    ...NAME_FIELDS.map((f) => ({ match: { [f]: { query: q, fuzziness: 'AUTO', prefix_length: 1, max_expansions: 20, boost: 2 } } })),
    { match: { summary: { query: q, boost: 1 } } },
    ...extraText.map((f) => ({ match: { [f]: { query: q, boost: 1 } } })),
  ];
  return { bool: { should, minimum_should_match: 1 } };
}

/**
 * `q` on the lists read in time or kind order (events, killmails, sources): a filter, not a
 * ranking, so the list keeps its order and its cursor. `q` matches a row when it is one of
 * the row's tokens (a whole id, kind or name: see `tokensOf`) or when each of its words is.
 */
export function toTokensFilter(q: string): Query {
  const lower = q.toLowerCase();
  const whole = term('tokens', lower);
  const parts = words(lower);
  if (parts.length === 0 || (parts.length === 1 && parts[0] === lower)) return whole;
  return { bool: { should: [whole, { bool: { filter: parts.map((word) => term('tokens', word)) } }], minimum_should_match: 1 } };
}
