/**
 * Confidence badges: each of the format's five labels has its own colour, always with its text
 * (colour is never the only signal) and a legend. White text on these backgrounds has a
 * contrast ratio of at least 4.5:1 (the colours are in styles.css, checked by axe in the
 * browser tests).
 */

export const CONFIDENCES = ['verified', 'probable', 'reported', 'stale', 'unknown'] as const;

const MEANING: Record<string, string> = {
  verified: 'confirmed by a primary source (chain, static client data, world API)',
  probable: 'inferred by an importer or an analyst from good evidence',
  reported: 'reported by players or the community, not confirmed',
  stale: 'was true; a newer import may have replaced it',
  unknown: 'no confidence was recorded',
};

export function Confidence({ value }: { value: unknown }) {
  const label = typeof value === 'string' && value !== '' ? value : 'unknown';
  const known = (CONFIDENCES as readonly string[]).includes(label);
  return (
    <span class={`badge conf-${known ? label : 'other'}`} title={MEANING[label] ?? 'a label outside the five of the export format'} data-confidence={label}>
      {label}
    </span>
  );
}

export function ConfidenceLegend() {
  return (
    <details class="legend">
      <summary>Confidence legend</summary>
      <dl>
        {CONFIDENCES.map((label) => (
          <div key={label}>
            <dt>
              <Confidence value={label} />
            </dt>
            <dd>{MEANING[label]}</dd>
          </div>
        ))}
      </dl>
    </details>
  );
}
