/**
 * Next / previous through `nextCursor`. Cursors only go forward, so the pages already seen are
 * remembered per list (the list's parameters without `cursor`): previous is the cursor before
 * the current one, or the first page when the view was opened on a deep link.
 */
import { formatHash } from '../route.ts';

const seen = new Map<string, (string | undefined)[]>();

export interface PagerProps {
  view: string;
  params: Record<string, string>;
  nextCursor: string | undefined;
  rows: number;
}

export function Pager({ view, params, nextCursor, rows }: PagerProps) {
  const { cursor, ...base } = params;
  const key = `${view}?${new URLSearchParams(base).toString()}`;
  const stack = seen.get(key) ?? [undefined];
  let index = stack.indexOf(cursor);
  if (index < 0) {
    // Opened on a deep link (or a reload): the pages before it are unknown.
    stack.splice(1, stack.length - 1, cursor);
    index = 1;
  }
  seen.set(key, stack);
  const previous = index > 0 ? formatHash(view, { ...base, cursor: stack[index - 1] }) : undefined;
  const next = nextCursor === undefined ? undefined : formatHash(view, { ...base, cursor: nextCursor });
  const rememberNext = () => {
    stack.splice(index + 1, stack.length, nextCursor);
  };
  return (
    <nav class="pager" aria-label="Pages">
      {previous ? (
        <a class="button" href={previous} rel="prev">
          ← Previous
        </a>
      ) : (
        <span class="button disabled" aria-disabled="true">
          ← Previous
        </span>
      )}
      <span class="page-no">
        Page {index + 1}
        {rows === 0 ? ' (empty)' : ''}
      </span>
      {next ? (
        <a class="button" href={next} rel="next" onClick={rememberNext}>
          Next →
        </a>
      ) : (
        <span class="button disabled" aria-disabled="true">
          Next →
        </span>
      )}
    </nav>
  );
}

/** "1,234 rows" from `meta.count` (with "at least" when the gateway says the count is a bound). */
export function CountLine({ count, exact, noun, plural = `${noun}s` }: { count: number | undefined; exact: boolean | undefined; noun: string; plural?: string }) {
  if (count === undefined) return null;
  return (
    <p class="count" data-testid="count" data-count={count}>
      {exact === false ? 'at least ' : ''}
      <strong>{count.toLocaleString('en')}</strong> {count === 1 ? noun : plural}
    </p>
  );
}
