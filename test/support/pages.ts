/**
 * What route tests share: walking a list to its end through `nextCursor`, and the
 * specification's scoping and time order computed independently of the gateway's code.
 */
import { expect } from 'vitest';
import type { TestGateway } from './gateway.ts';

/** Follows `nextCursor` to the last page; fails on an error page or a cursor seen twice. */
export async function walk(gw: TestGateway, route: string, limit: number): Promise<{ rows: any[]; pages: number }> {
  const rows: any[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const separator = route.includes('?') ? '&' : '?';
    const url = `${route}${separator}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const { status, body } = await gw.get(url);
    expect(status, `${url}: ${JSON.stringify(body)}`).toBe(200);
    expect(body.data.length).toBeLessThanOrEqual(limit);
    rows.push(...body.data);
    pages += 1;
    if (body.nextCursor === undefined) return { rows, pages };
    expect(body.data.length, 'a page with a next cursor is full').toBe(limit);
    expect(seen.has(body.nextCursor), 'cursor repeated').toBe(false);
    seen.add(body.nextCursor);
    cursor = body.nextCursor;
  }
}

/** The specification's cycle boundaries (the gateway's defaults): earlier instants are uncycled. */
const CYCLE_STARTS: [number, number][] = [
  [5, Date.parse('2026-03-11T09:00:00Z')],
  [6, Date.parse('2026-06-25T09:00:00Z')],
];

export function cycleOfInstant(text: string): number | undefined {
  const ms = Date.parse(text);
  let cycle: number | undefined;
  for (const [number, start] of CYCLE_STARTS) if (ms >= start) cycle = number;
  return cycle;
}

export type Scope = 'default' | 'current' | 'all' | number[];

/** Query strings of the specification's scopes, with the scope each means. */
export const SCOPE_CASES: [string, Scope][] = [
  ['cycles=all', 'all'],
  ['cycles=current', 'current'],
  ['cycles=5', [5]],
  ['cycle=6', [6]],
  ['cycles=5,6', [5, 6]],
];

/** Whether a row of `cycle` (undefined = uncycled) is in `scope` when `current` is the current cycle. */
export function inScope(cycle: number | undefined, scope: Scope, current: number): boolean {
  if (scope === 'all') return true;
  if (scope === 'current') return cycle === current;
  if (scope === 'default') return cycle === undefined || cycle === current;
  return cycle !== undefined && scope.includes(cycle);
}

/** An RFC 3339 time as nanoseconds since the epoch, so `.1Z` and `.100Z` are equal and order exactly. */
export function instantNanos(text: string): bigint {
  const match = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(text);
  if (!match) throw new Error(`not an RFC 3339 time: ${text}`);
  const seconds = BigInt(Date.parse(`${match[1]}${match[3]}`)) * 1_000_000n;
  return seconds + BigInt((match[2] ?? '').padEnd(9, '0').slice(0, 9));
}

/** Newest first by instant, ties by id descending (code-unit order equals byte order for these ids). */
export function newestFirst<T>(rows: T[], at: (row: T) => string, id: (row: T) => string): T[] {
  return [...rows].sort((a, b) => {
    const d = instantNanos(at(b)) - instantNanos(at(a));
    if (d !== 0n) return d > 0n ? 1 : -1;
    return id(a) < id(b) ? 1 : id(a) > id(b) ? -1 : 0;
  });
}

/** Byte order of UTF-8 strings, as Elasticsearch sorts keywords. */
export function byteCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
