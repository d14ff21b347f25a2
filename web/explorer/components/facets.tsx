/**
 * Facet chips from a `group_by` answer: one chip per group with its count; a chip toggles its
 * key in the filter's `|`-separated list (several values are OR, as the API takes them).
 * Groups with key null (rows without a value) are shown but cannot be picked: no filter
 * selects "no value". The first chips only until asked for all (a facet may have 200 groups).
 */

const FIRST_CHIPS = 12;
import { useState } from 'preact/hooks';
import type { Envelope, Group } from '../api.ts';
import { formatHash } from '../route.ts';

export interface FacetProps {
  title: string;
  /** The filter parameter the chips set (`type`, `kind`, `cycles` …). */
  param: string;
  groups: Envelope<Group[]> | undefined;
  view: string;
  params: Record<string, string>;
  /** `single`: picking replaces the value (environment); default: toggles it in a `|` list. */
  single?: boolean;
  /** How a picked key becomes the parameter's value (cycles take `5`, `5,6`). */
  join?: string;
  /** The chip of the rows without a value (key null). */
  unknownLabel?: string;
}

export function Facet({ title, param, groups, view, params, single, join = '|', unknownLabel = 'no value' }: FacetProps) {
  const [expanded, setExpanded] = useState(false);
  if (!groups) return null;
  const picked = (params[param] ?? '').split(join).filter(Boolean);
  const total = groups.meta.groupsCount ?? groups.data.length;
  const toggle = (key: string) => {
    const next = single ? (picked.includes(key) ? [] : [key]) : picked.includes(key) ? picked.filter((k) => k !== key) : [...picked, key];
    const { cursor: _cursor, ...rest } = params;
    return formatHash(view, { ...rest, [param]: next.join(join) || undefined });
  };
  return (
    <section class="facet" aria-label={`${title} facet`} data-facet={param}>
      <h3>
        {title}
        {total > groups.data.length ? <span class="muted"> (top {groups.data.length} of {total})</span> : null}
      </h3>
      <ul class="chips">
        {groups.data.slice(0, expanded ? undefined : FIRST_CHIPS).map((group) => {
          const key = group.key === null ? null : String(group.key);
          const label = key === null ? unknownLabel : group.label && group.label !== key ? `${group.label}` : key;
          const on = key !== null && picked.includes(key);
          return (
            <li key={String(key)}>
              {key === null ? (
                <span class="chip unknown-chip" title="rows with no value">
                  {label} <span class="n">{group.count.toLocaleString('en')}</span>
                </span>
              ) : (
                <a class={`chip${on ? ' on' : ''}`} href={toggle(key)} aria-current={on ? "true" : undefined} data-key={key} title={key}>
                  {label} <span class="n">{group.count.toLocaleString('en')}</span>
                </a>
              )}
            </li>
          );
        })}
      </ul>
      {groups.data.length > FIRST_CHIPS ? (
        <button type="button" class="link small" aria-expanded={expanded} onClick={() => setExpanded(!expanded)}>
          {expanded ? 'Show fewer' : `Show all ${groups.data.length}`}
        </button>
      ) : null}
    </section>
  );
}
