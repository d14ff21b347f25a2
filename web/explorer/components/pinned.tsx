/**
 * The pin: while the URL names a bundle (`bundle=`), every page reads that kept bundle, as it
 * answered when it was live, and this banner says so on every page, with the bundle's
 * `generatedAt` and the way back to the live bundle. A bundle no longer kept (410) or never
 * loaded here (404) says that instead, and every read below fails the same way.
 */
import { getJson, type Row, seg } from '../api.ts';
import { formatHash, type Route } from '../route.ts';
import { Failure, useAsync } from './async.tsx';

export function PinnedBanner({ route }: { route: Route }) {
  const bundle = route.params.bundle;
  const state = useAsync((signal) => (bundle ? getJson<Row>(`/v1/bundles/${seg(bundle)}`, {}, signal) : Promise.resolve(undefined)), [bundle]);
  if (!bundle) return null;
  const back = formatHash(route.view, { ...route.params, bundle: '' }, route.id, route.sub);
  return (
    <div class="pinned" role="status" data-testid="pinned">
      <strong>Pinned to bundle</strong> <code data-testid="pinned-bundle">{bundle.slice(0, 16)}</code>
      {state.status === 'done' && state.value ? <> generated {String(state.value.data.generatedAt ?? '—')}: every page shows this bundle as it answered when it was live. </> : null}
      {state.status === 'failed' ? <Failure error={state.error} /> : null}
      <a href={back} data-testid="unpin">
        Back to the live bundle
      </a>
    </div>
  );
}
