/**
 * The list being viewed as a file: links to the same route and filters with `format=csv` and
 * `format=ndjson` (the gateway streams every matching row, up to its cap, and names the file).
 */
import { apiUrl, type Params } from '../api.ts';

export function Downloads({ path, params }: { path: string; params: Params }) {
  return (
    <p class="downloads small">
      Download this list:{' '}
      <a href={apiUrl(path, { ...params, format: 'csv' })} download data-testid="download-csv">
        CSV
      </a>
      {' · '}
      <a href={apiUrl(path, { ...params, format: 'ndjson' })} download data-testid="download-ndjson">
        NDJSON
      </a>
    </p>
  );
}
