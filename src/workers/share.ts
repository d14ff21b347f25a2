/**
 * A machine-wide total shared out among worker processes: worker `index` of `workers` gets an
 * equal part, the remainder going one each to the first workers, so the parts add up to the
 * total — and at least `min`, so that a total smaller than the workers still lets each serve.
 */
export function shareOf(total: number, workers: number, index: number, min = 1): number {
  const part = Math.floor(total / workers) + (index < total % workers ? 1 : 0);
  return Math.max(min, part);
}
