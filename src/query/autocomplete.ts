/**
 * `/v1/autocomplete`: entities for the text typed so far, as request bodies. Pure.
 *
 * First `toSuggestBody`: an exact id or slug (two term lookups) and Elasticsearch's completion
 * suggester, which walks an in-memory FST — a keystroke costs the same at 55 k or 166 k
 * entities, where a scored query scores every match (thousands for two letters): names that
 * start with the text, then names with a later word that does. Only when those give fewer than
 * ten does the route send the rest, both at once: `toTyposBody`, the same suggester with one
 * typo, and `toAutocompleteBody`, the scored query below (words in any order, a typo in each):
 *
 * A row matches when its name or display name has every complete word (one typo allowed in
 * words of four letters or more) and a word starting with the last one typed, or when the text
 * is its exact id or slug. Ranked in tiers, each far above the next so BM25 cannot reorder them:
 * an exact id or slug; a name that starts with the text (case-insensitive, on the folded
 * `.exact` keyword); then by relevance. Ties: label, then id. The prefix of the last word reads
 * `index_prefixes` (up to 10 characters), so a keystroke costs no term expansion.
 *
 * The exact lookup is left out of both requests when the text cannot be an id or slug
 * (`exact: false`, see `needsExactLookup`): the first request is then the suggester alone.
 */
import { ANY_CYCLE, scopeContext } from '../indices/entities.ts';
import { type Query, type SearchBody, environmentScope, oneOf } from './list.ts';
import type { AnyOf } from './route-parameters.ts';
import { type CycleScope, scopeCycles } from './scope.ts';

/** Suggestions answered at most. */
export const SUGGESTIONS = 10;

/**
 * Options a suggester is asked for; the route keeps the best ten by score. Asked for ten, the
 * suggester sometimes returns a lower option in place of one of the ten best, and which one
 * depends on how the index's segments fall: two loads of one bundle disagreed on 11 of 3,000
 * prefixes asked for 10, on 7 asked for 11, on none asked for 15 or 20 (at no measurable cost
 * in Elasticsearch's CPU).
 */
const ASKED = 2 * SUGGESTIONS;

/** Levenshtein distance by word length: 0 below four letters, one typo from four on. */
const ONE_TYPO_FROM_FOUR = 'AUTO:4,1000';

const NAME_FIELDS = ['name', 'displayName'] as const;

export interface AutocompleteParams {
  q: string;
  environment: string;
  scope: CycleScope;
  entityType?: AnyOf;
  /** False when the text cannot be an exact id or slug (`needsExactLookup`): the bodies then leave the lookup out. Default true. */
  exact?: boolean;
}

const tier = (boost: number, query: Query): Query => ({ constant_score: { filter: query, boost } });

const idOrSlug = (text: string): Query => ({ bool: { should: [{ term: { id: text } }, { term: { slug: text } }], minimum_should_match: 1 } });

/**
 * Entities whose id holds no `:` or whose slug no `-`. The export format makes ids
 * colon-separated and turns a slug's non-alphanumerics into `-` (export-format.md §4), but does
 * not promise that every slug has one, so the route counts these once per generation. When
 * there are none, text with neither `:` nor `-` is no id or slug, and a keystroke needs no
 * exact lookup, a good share of the first request's work.
 */
export const UNSEPARATED_IDS: Query = {
  bool: { should: [{ bool: { must_not: { wildcard: { id: '*:*' } } } }, { bool: { must_not: { wildcard: { slug: '*-*' } } } }], minimum_should_match: 1 },
};

/**
 * Whether the exact id or slug lookup goes with `text`: when it holds a `:` or `-` it may be
 * one, and any text may be when some id or slug lacks its separator (`everySeparated` false:
 * `UNSEPARATED_IDS` counted some).
 */
export function needsExactLookup(text: string, everySeparated: boolean): boolean {
  return !everySeparated || /[:-]/.test(text);
}

function scopeFilter(params: AutocompleteParams, currentCycle: number): Query[] {
  const filter = environmentScope(params.environment, params.scope, currentCycle);
  if (params.entityType !== undefined) filter.push(oneOf('entityType', params.entityType));
  return filter;
}

/**
 * The completion suggesters, in rank order, named once for the bodies, their filters and the
 * route that reads their answers. `starts` goes with the id or slug lookup; `typos` (one typo
 * from four letters on, never in the first one, as the scored query's AUTO:4) is asked only
 * when those give fewer than ten, a small share of keystrokes: asked with `starts`, its fuzzy
 * walk of the FST would cost every keystroke.
 */
export const SUGGESTERS = { starts: 'starts', typos: 'typos' } as const;
type Suggester = (typeof SUGGESTERS)[keyof typeof SUGGESTERS];

/**
 * What the route reads of each answer (`filter_path`, a query parameter): the rows, and each
 * suggestion's score. Elasticsearch leaves out the rest as it writes — index names, ids, texts,
 * contexts: a good part of a suggester answer's bytes, which the gateway then need not decode
 * and parse. Not a `_source` filter: Elasticsearch parses every stored row again for that. A key
 * with nothing under it is left out too (no hits: no `hits`).
 */
const optionsFilter = (name: Suggester) => `suggest.${name}.options._score,suggest.${name}.options._source.row`;
export const SUGGEST_FILTER = `hits.hits._source.row,${optionsFilter(SUGGESTERS.starts)}`;
export const TYPOS_FILTER = optionsFilter(SUGGESTERS.typos);
/** The scored query: its rows alone (sorted by the query, so neither scores nor sort values are read). */
export const SCORED_FILTER = 'hits.hits._source.row';

/** The completion suggester over the scope's contexts: names that start with the text. */
function completion(params: AutocompleteParams, currentCycle: number) {
  const cycles: (number | typeof ANY_CYCLE)[] = scopeCycles(params.scope, currentCycle) ?? [ANY_CYCLE];
  const types = params.entityType ?? [undefined];
  const scope = cycles.flatMap((cycle) => types.map((type) => scopeContext(params.environment, cycle, type)));
  return { prefix: params.q, completion: { field: 'suggest', size: ASKED, contexts: { scope } } };
}

/** The exact id or slug, and the names that start with the text, in one request. */
export function toSuggestBody(params: AutocompleteParams, currentCycle: number): SearchBody {
  const suggest = { [SUGGESTERS.starts]: completion(params, currentCycle) };
  if (params.exact === false) return { size: 0, track_total_hits: false, suggest };
  return {
    query: { bool: { filter: [...scopeFilter(params, currentCycle), idOrSlug(params.q)] } },
    size: SUGGESTIONS,
    track_total_hits: false,
    suggest,
  };
}

/** The names that start with the text give or take one typo, from four letters on and never in the first one. */
export function toTyposBody(params: AutocompleteParams, currentCycle: number): SearchBody {
  const starts = completion(params, currentCycle);
  return {
    size: 0,
    track_total_hits: false,
    suggest: { [SUGGESTERS.typos]: { ...starts, completion: { ...starts.completion, fuzzy: { fuzziness: 1, min_length: 4, prefix_length: 1 } } } },
  };
}

export function toAutocompleteBody(params: AutocompleteParams, currentCycle: number): SearchBody {
  const text = params.q;
  const folded = text.toLowerCase();
  const filter = scopeFilter(params, currentCycle);
  const byId = params.exact === false ? [] : [idOrSlug(text)];
  const matches: Query[] = [
    ...byId,
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
        should: [...byId.map((query) => tier(10_000, query)), tier(1_000, startsWith)],
      },
    },
    sort: [{ _score: { order: 'desc' } }, { label: { order: 'asc' } }, { id: { order: 'asc' } }],
    size: SUGGESTIONS,
    track_total_hits: false,
  };
}
