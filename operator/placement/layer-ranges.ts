// Splits a model's decoder layers into pipeline stages: contiguous ranges, sizes differing by at
// most one, the larger ranges first (stage 0 holds the embedding, the last stage the LM head, so
// the last stage is given the smaller share when the layers do not divide evenly).

/** Layers [start, end) of one stage. */
export interface LayerRange {
  start: number;
  end: number;
}

export function splitLayers(numLayers: number, stages: number): LayerRange[] {
  if (!Number.isInteger(numLayers) || !Number.isInteger(stages) || stages < 1 || numLayers < stages)
    throw new RangeError(`cannot split ${numLayers} layers into ${stages} stages`);
  const base = Math.floor(numLayers / stages);
  const extra = numLayers % stages;
  const ranges: LayerRange[] = [];
  let start = 0;
  for (let stage = 0; stage < stages; stage++) {
    const size = base + (stage < extra ? 1 : 0);
    ranges.push({ start, end: start + size });
    start += size;
  }
  return ranges;
}
