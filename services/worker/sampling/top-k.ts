// Partial selection of the k largest values without sorting the whole vocabulary: one pass with a
// size-k min-heap, O(n log k), then a sort of the k survivors.

/**
 * Indices of the `k` largest entries of `values`, largest first; ties go to the lowest index.
 * NaN entries are never selected ahead of a number (callers reject NaN logits before this).
 * Returns fewer than `k` indices only when `values` is shorter than `k`.
 */
export function topKIndices(values: ArrayLike<number>, k: number): Int32Array {
  const n = values.length;
  const size = Math.max(0, Math.min(Math.floor(k), n));
  const heapIds = new Int32Array(size);
  const heapVals = new Float64Array(size);
  if (size === 0) return heapIds;

  // Min-heap on (value asc, index desc): the root is the worst kept entry.
  let count = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    if (count < size) {
      siftUp(heapIds, heapVals, count, i, v);
      count++;
    } else if (v > heapVals[0]!) {
      // Indices arrive in increasing order, so a tie with the root never displaces it.
      siftDown(heapIds, heapVals, size, i, v);
    }
  }

  const order = Array.from(heapIds);
  order.sort((a, b) => values[b]! - values[a]! || a - b);
  heapIds.set(order);
  return heapIds;
}

/** true when entry (va, ia) ranks below (vb, ib): smaller value, or equal value and larger index. */
function worse(va: number, ia: number, vb: number, ib: number): boolean {
  return va < vb || (va === vb && ia > ib);
}

function siftUp(ids: Int32Array, vals: Float64Array, at: number, id: number, v: number): void {
  let i = at;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    const pv = vals[parent]!;
    const pid = ids[parent]!;
    if (!worse(v, id, pv, pid)) break;
    ids[i] = pid;
    vals[i] = pv;
    i = parent;
  }
  ids[i] = id;
  vals[i] = v;
}

/** Replaces the root with (id, v) and restores the heap. */
function siftDown(ids: Int32Array, vals: Float64Array, size: number, id: number, v: number): void {
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= size) break;
    let child = left;
    const right = left + 1;
    if (right < size && worse(vals[right]!, ids[right]!, vals[left]!, ids[left]!)) child = right;
    const cv = vals[child]!;
    const cid = ids[child]!;
    if (!worse(cv, cid, v, id)) break;
    ids[i] = cid;
    vals[i] = cv;
    i = child;
  }
  ids[i] = id;
  vals[i] = v;
}
