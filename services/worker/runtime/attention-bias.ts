// The additive attention mask of one step: S new queries at positions P..P+S-1 over P+S keys.
// 0 where the query may attend (causal: key position <= query position, and within the sliding
// window when the model has one), -inf elsewhere.

export function attentionBias(past: number, count: number, slidingWindow?: number): Float32Array {
  const total = past + count;
  const bias = new Float32Array(count * total);
  for (let s = 0; s < count; s++) {
    const q = past + s;
    const lowest = slidingWindow === undefined ? 0 : q - slidingWindow + 1;
    const row = bias.subarray(s * total, (s + 1) * total);
    for (let t = 0; t < total; t++) if (t > q || t < lowest) row[t] = Number.NEGATIVE_INFINITY;
  }
  return bias;
}
