/**
 * The search box: suggestions from `/v1/autocomplete` as the user types (debounced, one request
 * in flight, stale answers dropped), arrow keys and Enter to pick, Escape to close, the part of
 * each word matching what was typed marked. Enter without a picked suggestion opens the record a
 * pasted identifier names (`/v1/resolve`: an id, slug, address, digest…), else the full results.
 * ARIA 1.2 combobox pattern (input + listbox).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { getJson, type Row } from '../api.ts';
import { formatHash, navigate, viewOfType } from '../route.ts';

const DEBOUNCE_MS = 150;

export interface SearchBoxProps {
  /** Scope applied to suggestions and results (environment, cycles). */
  scope: Record<string, string>;
  initial: string;
}

export function SearchBox({ scope, initial }: SearchBoxProps) {
  const [text, setText] = useState(initial);
  const [suggestions, setSuggestions] = useState<Row[]>([]);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const [unavailable, setUnavailable] = useState(false);
  const latest = useRef(0);

  useEffect(() => setText(initial), [initial]);

  useEffect(() => {
    const q = text.trim();
    if (q === '' || q === initial.trim()) {
      setSuggestions([]);
      return;
    }
    const ticket = ++latest.current;
    const controller = new AbortController();
    const timer = setTimeout(() => {
      getJson<Row[]>('/v1/autocomplete', { q, environment: scope.environment, cycles: scope.cycles, type: scope.type }, controller.signal).then(
        (answer) => {
          if (ticket !== latest.current) return;
          setSuggestions(answer.data);
          setActive(-1);
          setOpen(true);
          setUnavailable(false);
        },
        (error: Error) => {
          if (error.name !== 'AbortError' && ticket === latest.current) setUnavailable(true);
        },
      );
    }, DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [text]);

  const pick = (row: Row) => {
    setOpen(false);
    setText('');
    navigate(formatHash('entities', {}, String(row.id)));
  };
  const submit = async () => {
    setOpen(false);
    const q = text.trim();
    const record = q && !/\s/.test(q) ? await resolved(q) : undefined;
    if (record) {
      setText('');
      return navigate(record);
    }
    navigate(formatHash('search', { ...scope, q: q || undefined }));
  };
  const onKeyDown = (event: KeyboardEvent) => {
    const shown = open && suggestions.length > 0;
    if (event.key === 'ArrowDown' && suggestions.length > 0) {
      event.preventDefault();
      setOpen(true);
      setActive((active + 1) % suggestions.length);
    } else if (event.key === 'ArrowUp' && shown) {
      event.preventDefault();
      setActive(active <= 0 ? suggestions.length - 1 : active - 1);
    } else if (event.key === 'Escape') {
      setOpen(false);
    } else if (event.key === 'Enter') {
      event.preventDefault();
      const row = shown && active >= 0 ? suggestions[active] : undefined;
      if (row) pick(row);
      else void submit();
    }
  };

  const shown = open && suggestions.length > 0;
  return (
    <form class="search-box" role="search" onSubmit={(event) => (event.preventDefault(), void submit())}>
      <label for="q" class="visually-hidden">
        Search the registry
      </label>
      <input
        id="q"
        type="search"
        // ARIA 1.2 combobox on a text input (Preact's types only allow it with `list`).
        {...({ role: 'combobox' } as Record<string, string>)}
        autocomplete="off"
        placeholder="Search entities: a name, an id, a slug…"
        aria-autocomplete="list"
        aria-expanded={shown}
        aria-controls="suggestions"
        aria-activedescendant={shown && active >= 0 ? `suggestion-${active}` : undefined}
        value={text}
        onInput={(event) => setText((event.target as HTMLInputElement).value)}
        onKeyDown={onKeyDown}
        onBlur={() => setTimeout(() => setOpen(false), 150)}
        onFocus={() => suggestions.length > 0 && setOpen(true)}
      />
      <button type="submit">Search</button>
      <ul id="suggestions" role="listbox" aria-label="Suggestions" hidden={!shown}>
        {suggestions.map((row, index) => (
          <li
            key={String(row.id)}
            id={`suggestion-${index}`}
            role="option"
            aria-selected={index === active}
            class={index === active ? 'active' : ''}
            onMouseDown={(event) => (event.preventDefault(), pick(row))}
            data-id={row.id}
          >
            <span class="label">
              <Marked label={String(row.label ?? row.id)} typed={text} />
            </span>
            <span class="type">{row.entityType}</span>
            {row.hint ? <span class="hint">{String(row.hint)}</span> : null}
          </li>
        ))}
      </ul>
      {unavailable ? <p class="muted small">Suggestions are unavailable; Enter searches.</p> : null}
    </form>
  );
}

interface Resolved {
  type: string;
  id: string;
}

/**
 * Where a pasted identifier leads: the record it names, a transaction's events when it is a
 * digest; undefined (search instead) when it names nothing or several records, or the gateway
 * cannot say.
 */
async function resolved(value: string): Promise<string | undefined> {
  const records = await getJson<(Resolved & { matched: string })[]>(`/v1/resolve/${encodeURIComponent(value)}`).then(
    (answer) => answer.data,
    () => [],
  );
  // One id may be both an entity and its own record (a killmail is also in entities.jsonl): the record's view says more.
  if (records.length > 0 && new Set(records.map((r) => r.id)).size === 1) {
    const record = records.find((r) => r.type !== 'entity') ?? records[0]!;
    return formatHash(viewOfType(record.type), {}, record.id);
  }
  if (records.length > 1 && records.every((r) => r.type === 'event' && r.matched === 'transactionDigest')) return formatHash('events', { transaction_digest: value, cycles: 'all' });
  return undefined;
}

/** The label with, in each word, the longest prefix shared with a typed word inside `<mark>`. */
export function Marked({ label, typed }: { label: string; typed: string }) {
  const words = typed.toLowerCase().split(/\s+/).filter(Boolean);
  const parts = label.split(/(\s+)/);
  return (
    <>
      {parts.map((part, index) => {
        const lower = part.toLowerCase();
        let length = 0;
        for (const word of words) {
          let n = 0;
          while (n < word.length && n < lower.length && word[n] === lower[n]) n += 1;
          length = Math.max(length, n);
        }
        return length > 0 ? (
          <span key={index}>
            <mark>{part.slice(0, length)}</mark>
            {part.slice(length)}
          </span>
        ) : (
          <span key={index}>{part}</span>
        );
      })}
    </>
  );
}
