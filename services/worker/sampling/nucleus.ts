// Top-p (nucleus) selection without sorting: a quickselect on probability mass. Expected O(n),
// so a flat distribution over a 150k vocabulary costs no more than a peaked one.

/**
 * Reorders the first `n` entries of the parallel arrays `ids`/`weights` (weights >= 0, not
 * necessarily normalised) so that the nucleus comes first, and returns its size: the smallest set
 * of the heaviest entries whose total weight reaches `target` (for top-p: `topP * total weight`).
 * Entries of equal weight at the boundary are taken lowest id first. Always keeps at least one entry
 * when `target > 0`. The order inside the nucleus is unspecified but deterministic.
 */
export function selectNucleus(ids: Int32Array, weights: Float64Array, n: number, target: number): number {
  let lo = 0;
  let hi = n;
  let massAbove = 0; // weight of the entries before `lo`, all in the nucleus
  while (lo < hi) {
    const pivot = medianOfThree(weights[lo]!, weights[(lo + hi) >> 1]!, weights[hi - 1]!);
    // Three-way partition of [lo, hi): [lo, lt) > pivot, [lt, gt) == pivot, [gt, hi) < pivot.
    let lt = lo;
    let gt = hi;
    let i = lo;
    let massGreater = 0;
    while (i < gt) {
      const w = weights[i]!;
      if (w > pivot) {
        massGreater += w;
        swap(ids, weights, i, lt);
        lt++;
        i++;
      } else if (w < pivot) {
        gt--;
        swap(ids, weights, i, gt);
      } else {
        i++;
      }
    }
    if (massAbove + massGreater >= target) {
      // The heavier part alone reaches the target (it is non-empty, since target > massAbove).
      hi = lt;
      continue;
    }
    const equalCount = gt - lt;
    const massEqual = equalCount * pivot;
    if (massAbove + massGreater + massEqual >= target) {
      const needed = Math.min(equalCount, Math.max(1, Math.ceil((target - massAbove - massGreater) / pivot)));
      if (needed < equalCount) ids.subarray(lt, gt).sort();
      return lt + needed;
    }
    massAbove += massGreater + massEqual;
    lo = gt;
  }
  // Only reached through rounding (all of [0, hi) together is the nucleus).
  return Math.max(hi, Math.min(n, 1));
}

function medianOfThree(a: number, b: number, c: number): number {
  return Math.max(Math.min(a, b), Math.min(Math.max(a, b), c));
}

function swap(ids: Int32Array, weights: Float64Array, i: number, j: number): void {
  const id = ids[i]!;
  ids[i] = ids[j]!;
  ids[j] = id;
  const w = weights[i]!;
  weights[i] = weights[j]!;
  weights[j] = w;
}
