/**
 * The live switch of the events and killmails pages: while on, an `EventSource` on the list's
 * stream route (`/v1/<list>/stream`) with the page's filters, each arriving row kept once (by
 * id) for the page to show with its list. The stream starts at the generation the page was
 * read from (`since_indexed` = the page's `meta.indexedThrough`), so no row loaded between the
 * page's answer and the stream's opening is missed; EventSource reconnects by itself, resuming
 * after the last event id it received.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Row } from '../api.ts';

export type LiveStatus = 'off' | 'connecting' | 'live' | 'reconnecting' | 'stopped';

/** Rows kept from one stream: past this, the first to arrive are dropped (a tab left open for days). */
export const LIVE_MAX_ROWS = 500;

/** The rows `url` has sent, in arrival order, each once; no stream while `url` is undefined. */
export function useLiveRows(url: string | undefined): { status: LiveStatus; rows: Row[] } {
  const [state, setState] = useState<{ url: string | undefined; status: LiveStatus; rows: Row[] }>({ url, status: url ? 'connecting' : 'off', rows: [] });
  const seen = useRef(new Set<string>());
  useEffect(() => {
    seen.current = new Set();
    setState({ url, status: url ? 'connecting' : 'off', rows: [] });
    if (!url) return undefined;
    const source = new EventSource(url);
    source.onopen = () => setState((s) => ({ ...s, status: 'live' }));
    // CONNECTING after an error: EventSource retries by itself (Last-Event-ID); CLOSED: it gave up (an error answer).
    source.onerror = () => setState((s) => ({ ...s, status: source.readyState === EventSource.CLOSED ? 'stopped' : 'reconnecting' }));
    source.onmessage = (event: MessageEvent<string>) => {
      let row: Row;
      try {
        row = JSON.parse(event.data) as Row;
      } catch {
        return;
      }
      const id = String(row.id);
      if (seen.current.has(id)) return;
      seen.current.add(id);
      setState((s) => ({ ...s, status: 'live', rows: [...s.rows, row].slice(-LIVE_MAX_ROWS) }));
    };
    return () => source.close();
  }, [url]);
  // The render before the effect still holds the previous stream's rows: never show them for the new one.
  return state.url === url ? state : { status: url ? 'connecting' : 'off', rows: [] };
}

/**
 * The page's rows with the live ones, none twice: newest first (`prepend`), each arriving row
 * goes on top; oldest first, at the bottom.
 */
export function withLiveRows(page: readonly Row[], live: readonly Row[], prepend: boolean): Row[] {
  const onPage = new Set(page.map((row) => String(row.id)));
  const fresh = live.filter((row) => !onPage.has(String(row.id)));
  return prepend ? [...fresh.reverse(), ...page] : [...page, ...fresh];
}

const WORDS: Record<LiveStatus, string> = { off: '', connecting: 'connecting…', live: 'live', reconnecting: 'reconnecting…', stopped: 'stopped' };

/** The switch (a button with role `switch`) and the stream's status, announced politely. */
export function LiveSwitch({ on, status, count, onToggle }: { on: boolean; status: LiveStatus; count: number; onToggle(): void }) {
  return (
    <span class="live">
      <button type="button" class="switch" role="switch" aria-checked={on} onClick={onToggle} data-testid="live-switch">
        <span class="track" aria-hidden="true" />
        Live
      </button>
      <span class={`live-status${on ? ` live-${status}` : ''}`} role="status" data-testid="live-status" data-status={on ? status : 'off'}>
        {on ? WORDS[status] : ''}
        {on && count > 0 ? ` · ${count.toLocaleString('en')} new` : ''}
      </span>
    </span>
  );
}
