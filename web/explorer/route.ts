/**
 * The explorer's state is its URL: `#/<view>[/<id>][?<params>]`. A view can be shared and
 * reloaded; the back button walks views; `bundle=` pins every view to a kept bundle. Parsing
 * and formatting only: no DOM beyond `location`.
 */

export interface Route {
  /** `search`, `entities`, `events`, `killmails`, `sources`, `artefacts`, `chain-objects`, `status`. */
  view: string;
  /** The id after the view (`#/entities/<id>`), decoded. */
  id?: string;
  /** `raw` in `#/killmails/<id>/raw`. */
  sub?: string;
  params: Record<string, string>;
}

export function parseHash(hash: string): Route {
  const text = hash.replace(/^#\/?/, '');
  const [pathPart = '', queryPart = ''] = splitOnce(text, '?');
  const [view = '', id, sub] = pathPart.split('/').map((part) => decodeURIComponent(part));
  const params: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(queryPart)) if (value !== '') params[name] = value;
  return { view: view || 'search', ...(id ? { id } : {}), ...(sub ? { sub } : {}), params };
}

/** The hash parameter that pins every view to a kept bundle (`bundle=` on every read): kept by every link while set. */
export const PIN = 'bundle';

/** The bundle the explorer is pinned to, if it is (the current URL's `bundle`). */
export function pinnedBundle(): string | undefined {
  return parseHash(location.hash).params[PIN];
}

/** A view's hash; the pin of the current URL goes along unless `params` names `bundle` (`''`: back to the live bundle). */
export function formatHash(view: string, params: Record<string, string | undefined> = {}, id?: string, sub?: string): string {
  const path = [view, id, sub].filter((part): part is string => part !== undefined).map((part) => encodeURIComponent(part)).join('/');
  const search = new URLSearchParams();
  const pinned = PIN in params ? {} : { [PIN]: pinnedBundle() };
  for (const [name, value] of Object.entries({ ...params, ...pinned })) if (value !== undefined && value !== '') search.set(name, value);
  const query = search.toString();
  return `#/${path}${query ? `?${query}` : ''}`;
}

/** Link target of a registry id: entities, events, killmails, sources, artefacts and chain objects each have a view. */
export function hrefOf(id: string): string {
  const prefix = id.slice(0, id.indexOf(':'));
  const view = { event: 'events', killmail: 'killmails', source: 'sources', artefact: 'artefacts', object: 'chain-objects' }[prefix] ?? 'entities';
  return formatHash(view, {}, id);
}

/** The view of a record `/v1/resolve` names by its `type`. */
export function viewOfType(type: string): string {
  return { killmail: 'killmails', event: 'events', source: 'sources', artefact: 'artefacts', chain_object: 'chain-objects' }[type] ?? 'entities';
}

export function navigate(hash: string): void {
  if (location.hash !== hash) location.hash = hash;
}

function splitOnce(text: string, separator: string): [string, string] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, ''] : [text.slice(0, at), text.slice(at + 1)];
}
