/** The end-of-load summary: one line per file, then totals with throughput and peak RSS. */
import type { LoadSummary } from './load-bundle.ts';

export function formatSummary(summary: LoadSummary): string {
  if (summary.status === 'unchanged') return `unchanged: generation ${summary.generation} already serves this bundle`;
  const lines = [`loaded generation ${summary.generation} (bundle ${summary.bundleId.slice(0, 16)})`];
  for (const f of summary.files) {
    const rate = f.seconds > 0 ? Math.round(f.rows / f.seconds) : f.rows;
    lines.push(`  ${f.file.padEnd(26)} ${String(f.rows).padStart(10)} rows ${String(f.documents ?? '').padStart(10)} docs ${f.seconds.toFixed(1).padStart(7)} s ${String(rate).padStart(8)} rows/s  from ${(f.startedAt ?? 0).toFixed(1).padStart(5)} s  peak RSS ${f.peakRssMb} MB`);
  }
  const rate = summary.seconds > 0 ? Math.round(summary.rows / summary.seconds) : summary.rows;
  const rssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  lines.push(`  total ${summary.rows} rows in ${summary.seconds.toFixed(1)} s: ${rate} rows/s, peak RSS ${rssMb} MB`);
  lines.push(`  steps: ${formatSteps(summary.steps)}`);
  if (summary.dropped.length) lines.push(`  dropped generations: ${summary.dropped.join(', ')}`);
  return lines.join('\n');
}

/** Where a load's time went, step by step ("plan 0.1 s, files 30.9 s, …"). */
export function formatSteps(steps: LoadSummary['steps']): string {
  return Object.entries(steps)
    .map(([name, s]) => `${name} ${s.toFixed(1)} s`)
    .join(', ');
}
