/**
 * Scope controls shared by every list view: the environment selector and the cycles selector
 * (`current` strictly, `all`, a list such as `5,6`, or the API's default: the current cycle
 * plus uncycled rows). Environments offered: the gateway's default and those its operations
 * documents name, read once.
 */
import { useState } from 'preact/hooks';
import { getJson, type Row } from '../api.ts';
import { formatHash, navigate } from '../route.ts';
import { useAsync } from './async.tsx';

let environments: Promise<string[]> | undefined;

/** The gateway's default environment first, then the others its ops documents name. */
export function knownEnvironments(): Promise<string[]> {
  environments ??= Promise.all([
    getJson<Row>('/v1').then((answer) => String(answer.data.defaultEnvironment ?? '')),
    getJson<Row[]>('/v1/ops/source-gaps').then((answer) => answer.data.map((row) => String(row.environment ?? '')), () => []),
    getJson<Row[]>('/v1/ops/freshness').then((answer) => answer.data.map((row) => String(row.environment ?? '')), () => []),
  ]).then(([first, ...others]) => [...new Set([first, ...others.flat()].filter(Boolean))]);
  return environments;
}

export function ScopeControls({ view, params }: { view: string; params: Record<string, string> }) {
  const envs = useAsync(() => knownEnvironments(), []);
  const options = envs.status === 'done' ? envs.value : [];
  const environment = params.environment ?? '';
  const cycles = params.cycles ?? '';
  const mode = cycles === '' || cycles === 'current' || cycles === 'all' ? cycles : 'list';
  const [list, setList] = useState(mode === 'list' ? cycles : '');
  const [picked, setPicked] = useState(mode);
  const go = (change: Record<string, string | undefined>) => {
    const { cursor: _cursor, ...rest } = params;
    navigate(formatHash(view, { ...rest, ...change }));
  };
  return (
    <div class="scope" role="group" aria-label="Scope">
      <label>
        Environment{' '}
        <select value={environment} onChange={(event) => go({ environment: (event.target as HTMLSelectElement).value || undefined })}>
          <option value="">default{options[0] ? ` (${options[0]})` : ''}</option>
          {[...new Set([...options, ...(environment ? [environment] : [])])].map((env) => (
            <option key={env} value={env}>
              {env}
            </option>
          ))}
        </select>
      </label>
      <label>
        Cycles{' '}
        <select
          value={picked}
          onChange={(event) => {
            const value = (event.target as HTMLSelectElement).value;
            setPicked(value);
            if (value !== 'list') go({ cycles: value || undefined });
          }}
        >
          <option value="">current + uncycled (default)</option>
          <option value="current">current only</option>
          <option value="all">all cycles</option>
          <option value="list">a list…</option>
        </select>
      </label>
      {picked === 'list' ? (
        <form class="inline" onSubmit={(event) => (event.preventDefault(), go({ cycles: list.trim() || undefined }))}>
          <label>
            Cycle list{' '}
            <input size={8} value={list} placeholder="5,6" pattern="[0-9]+(,[0-9]+)*" onInput={(event) => setList((event.target as HTMLInputElement).value)} />
          </label>
          <button type="submit">Apply</button>
        </form>
      ) : null}
    </div>
  );
}
