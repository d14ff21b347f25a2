/**
 * Cycle scope, exactly as the specification says:
 * - neither `cycles` nor `cycle`: the current cycle plus uncycled rows;
 * - `cycles=current`: strictly the current cycle; `cycles=all`: no cycle filter;
 * - `cycles=5,6`: those cycles only; `cycle=6`: that cycle only;
 * - both given, or anything malformed: 400 naming the parameter.
 * An empty value counts as absent, so `cycles=&cycle=5` means cycle 5. `current` and `all`
 * are case-insensitive.
 *
 * The two parameters are declared here (their patterns are what is validated and documented).
 */
import { UNCYCLED } from '../indices/cycle.ts';
import { queryParameter } from './parameters.ts';

export type CycleScope =
  | { kind: 'default' }
  | { kind: 'current' }
  | { kind: 'all' }
  | { kind: 'cycles'; cycles: number[] };

const CYCLE_NUMBER = '[1-9][0-9]{0,5}';
/** What String.prototype.trim removes (JavaScript's `\s`), spelled out so the pattern means the same in any regex engine. */
const SPACE = '[\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]';

/** A pattern matching a word in any letter case, without regex flags (JSON Schema patterns have none). */
function caseless(word: string): string {
  return [...word].map((c) => `[${c.toLowerCase()}${c.toUpperCase()}]`).join('');
}

const DEFAULT_SCOPE_WORDS = 'Without `cycles` and `cycle`: the current cycle plus uncycled rows.';

export const CYCLES = queryParameter('cycles', {
  description: `Cycle scope: \`current\` (strictly the current cycle), \`all\` (every cycle and uncycled rows) or a comma-separated list of cycle numbers. ${DEFAULT_SCOPE_WORDS} \`cycle\` (the reference's parameter for one cycle: a number or \`current\`) is accepted in its place; not both.`,
  schema: {
    type: 'string',
    pattern: `^(?:${caseless('current')}|${caseless('all')}|${CYCLE_NUMBER}(?:${SPACE}*,${SPACE}*${CYCLE_NUMBER})*)$`,
    examples: ['current', 'all', '5,6'],
  },
  expects: 'current, all or a comma-separated list of cycle numbers',
  excludes: 'cycle',
  convert(text): CycleScope {
    const lower = text.toLowerCase();
    if (lower === 'current' || lower === 'all') return { kind: lower };
    return { kind: 'cycles', cycles: [...new Set(text.split(',').map((part) => Number(part.trim())))].sort((a, b) => a - b) };
  },
});

export const CYCLE = queryParameter('cycle', {
  description: `One cycle: a cycle number, or \`current\`. ${DEFAULT_SCOPE_WORDS} Not together with \`cycles\`.`,
  // No examples: tried together with those of `cycles`, every one would be a 400.
  schema: { type: 'string', pattern: `^(?:${CYCLE_NUMBER}|${caseless('current')})$` },
  expects: 'a cycle number or current',
  aliasOf: 'cycles',
  convert: (text): CycleScope => (text.toLowerCase() === 'current' ? { kind: 'current' } : { kind: 'cycles', cycles: [Number(text)] }),
});

/** The scope of validated `cycles`/`cycle` values (at most one is set). */
export function scopeOf(values: { cycles?: CycleScope; cycle?: CycleScope }): CycleScope {
  return values.cycles ?? values.cycle ?? { kind: 'default' };
}

/** The `cycle` values a scope admits (undefined = no filter), given the generation's current cycle. */
export function scopeCycles(scope: CycleScope, currentCycle: number): number[] | undefined {
  switch (scope.kind) {
    case 'default':
      return [currentCycle, UNCYCLED];
    case 'current':
      return [currentCycle];
    case 'all':
      return undefined;
    case 'cycles':
      return scope.cycles;
  }
}
