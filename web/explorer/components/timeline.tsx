/**
 * The timeline: the matching rows per day, week or month as bars (uPlot), from a
 * `group_by=occurredAt:<interval>` answer (every bucket in time order, empty ones at 0).
 * Clicking a bar narrows the list to that bucket: `since` = its first day, `until` = the next
 * bucket's first day (exclusive). The same buckets are listed in a table for keyboard and
 * screen-reader users.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Group } from '../api.ts';

export type Interval = 'day' | 'week' | 'month';

/** Tick steps of the count axis: 1, 2, 5, 10, 20, 50 … */
const COUNT_STEPS = Array.from({ length: 24 }, (_, i) => [1, 2, 5][i % 3]! * 10 ** Math.floor(i / 3));
export const INTERVALS: readonly Interval[] = ['day', 'week', 'month'];

/** The first instant after the bucket that starts on `key` (YYYY-MM-DD, UTC). */
export function bucketEnd(key: string, interval: Interval): string {
  const date = new Date(`${key}T00:00:00Z`);
  if (interval === 'day') date.setUTCDate(date.getUTCDate() + 1);
  else if (interval === 'week') date.setUTCDate(date.getUTCDate() + 7);
  else date.setUTCMonth(date.getUTCMonth() + 1);
  return date.toISOString().replace('.000Z', 'Z');
}

export const bucketStart = (key: string) => `${key}T00:00:00Z`;

export interface TimelineProps {
  buckets: Group[];
  interval: Interval;
  noun: string;
  onPick(key: string): void;
}

export function Timeline({ buckets, interval, noun, onPick }: TimelineProps) {
  const holder = useRef<HTMLDivElement>(null);
  const pickRef = useRef(onPick);
  pickRef.current = onPick;

  useEffect(() => {
    const element = holder.current;
    if (!element || buckets.length === 0) return;
    const keys = buckets.map((bucket) => String(bucket.key));
    const xs = keys.map((key) => Date.parse(bucketStart(key)) / 1000);
    const ys = buckets.map((bucket) => bucket.count);
    const width = () => Math.max(320, element.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 180,
        legend: { show: false },
        cursor: { drag: { x: false, y: false }, points: { show: false } },
        scales: { x: { time: true, range: () => padRange(xs) } },
        // The count axis as wide as its longest label (uPlot's fixed default cuts 60,000 to 0,000).
        // Counts are whole numbers: integer ticks only.
        axes: [
          { stroke: '#3d4650', grid: { show: false } },
          { stroke: '#3d4650', size: 24 + 8 * Math.max(...ys, 1).toLocaleString('en').length, grid: { stroke: '#e3e6ea' }, incrs: COUNT_STEPS, values: (_u, ticks) => ticks.map((tick) => tick.toLocaleString('en')) },
        ],
        series: [{}, { label: noun, fill: '#1f5fbf', stroke: '#174a94', paths: uPlot.paths.bars!({ size: [0.85, 60], align: 0 }) }],
        hooks: {
          draw: [
            (u) => {
              // Where each bar is, for tests and tooling that click one (CSS pixels in the plot area).
              u.over.dataset.bars = JSON.stringify(keys.map((key, i) => [key, Math.round(u.valToPos(xs[i]!, 'x'))]));
            },
          ],
        },
      },
      [xs, ys],
      element,
    );
    plot.over.style.cursor = 'pointer';
    plot.over.title = 'Click a bar to narrow the list to it';
    plot.over.addEventListener('click', () => {
      const index = plot.cursor.idx;
      if (index !== null && index !== undefined && keys[index] !== undefined) pickRef.current(keys[index]);
    });
    const resize = new ResizeObserver(() => plot.setSize({ width: width(), height: 180 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [buckets, interval]);

  const total = buckets.reduce((sum, bucket) => sum + bucket.count, 0);
  const busiest = buckets.reduce<Group | undefined>((best, bucket) => (best === undefined || bucket.count > best.count ? bucket : best), undefined);
  return (
    <figure class="timeline" data-testid="timeline">
      <div ref={holder} class="chart" role="img" aria-label={`${total} ${noun}s in ${buckets.length} ${interval}s${busiest ? `; busiest ${busiest.key} with ${busiest.count}` : ''}`} />
      <figcaption class="muted small">
        {noun}s per {interval} (UTC) · click a bar to narrow the list to it
      </figcaption>
      <details class="buckets">
        <summary>Buckets as a table</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">{interval} starting</th>
              <th scope="col">{noun}s</th>
            </tr>
          </thead>
          <tbody>
            {buckets.map((bucket) => (
              <tr key={String(bucket.key)}>
                <td>
                  <button type="button" class="link" onClick={() => onPick(String(bucket.key))}>
                    {String(bucket.key)}
                  </button>
                </td>
                <td class="num">{bucket.count.toLocaleString('en')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}

/** The buckets' span with half a bucket of room on each side, so the first and last bars are whole. */
function padRange(xs: number[]): [number, number] {
  const first = xs[0]!;
  const last = xs[xs.length - 1]!;
  const step = xs.length > 1 ? (last - first) / (xs.length - 1) : 86_400;
  return [first - step / 2, last + step / 2];
}
