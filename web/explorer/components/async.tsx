/**
 * Loading an answer for a component: `useAsync(load, deps)` runs `load` with an AbortSignal
 * whenever `deps` change, cancels the previous run, and returns its state. `Failure` shows an
 * API error as the gateway worded it.
 */
import { useEffect, useState } from 'preact/hooks';
import { RegistryError } from '../api.ts';

export type AsyncState<T> = { status: 'loading' } | { status: 'done'; value: T } | { status: 'failed'; error: Error };

export function useAsync<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): AsyncState<T> {
  const key = JSON.stringify(deps);
  const [state, setState] = useState<{ key: string; value: AsyncState<T> }>({ key, value: { status: 'loading' } });
  useEffect(() => {
    const controller = new AbortController();
    setState({ key, value: { status: 'loading' } });
    load(controller.signal).then(
      (value) => controller.signal.aborted || setState({ key, value: { status: 'done', value } }),
      (error: Error) => controller.signal.aborted || setState({ key, value: { status: 'failed', error } }),
    );
    return () => controller.abort();
  }, deps);
  // The first render after the deps change still holds the previous answer (the effect runs
  // after it): never show it as the answer to the new ones.
  return state.key === key ? state.value : { status: 'loading' };
}

export function Failure({ error }: { error: Error }) {
  const status = error instanceof RegistryError && error.status ? ` (${error.status} ${error.code})` : '';
  return (
    <p class="failure" role="alert">
      {error.message}
      {status}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" aria-live="polite">
      Loading {what}…
    </p>
  );
}
