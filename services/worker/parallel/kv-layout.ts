// KV blocks of a sharded replica: each member holds its layers and its rank's KV heads, exported as
// [block][its layer][key|value][token][its KV head][dim]. The engine (and the remote KV tier) sees
// whole blocks [block][layer][key|value][token][KV head][dim], as a single process exports them, so a
// block stored by a sharded replica can be loaded by any replica of the same model, sharded or not.
// The one member of a group of one (a single process) holds whole blocks: its data passes as it is.
export interface KvDims {
  numLayers: number;
  kvHeads: number;
  headDim: number;
  blockSize: number;
}

/** The part of every block one member holds: layers [start, end) and KV heads [start, end). */
export interface KvPart {
  layers: { start: number; end: number };
  heads: { start: number; end: number };
}

/** Calls copy(wholeOffset, partOffset, length) for every contiguous run of `part` in `blocks` blocks. */
function walk(
  dims: KvDims,
  part: KvPart,
  blocks: number,
  copy: (whole: number, local: number, length: number) => void,
): void {
  const { numLayers: L, kvHeads: H, headDim: D, blockSize: T } = dims;
  const partLayers = part.layers.end - part.layers.start;
  const partHeads = part.heads.end - part.heads.start;
  const run = partHeads * D;
  let local = 0;
  for (let b = 0; b < blocks; b++)
    for (let l = part.layers.start; l < part.layers.end; l++)
      for (let kv = 0; kv < 2; kv++)
        for (let t = 0; t < T; t++) {
          copy((((b * L + l) * 2 + kv) * T + t) * H * D + part.heads.start * D, local, run);
          local += run;
        }
  if (local !== blocks * partLayers * 2 * T * run) throw new Error("kv layout walk is inconsistent");
}

export function partFloats(dims: KvDims, part: KvPart, blocks: number): number {
  const layers = part.layers.end - part.layers.start;
  return blocks * layers * 2 * dims.blockSize * (part.heads.end - part.heads.start) * dims.headDim;
}

/** Whether a part is all of every block (the member of a group of one). */
function isWhole(dims: KvDims, part: KvPart): boolean {
  const { layers, heads } = part;
  return (
    layers.start === 0 && layers.end === dims.numLayers && heads.start === 0 && heads.end === dims.kvHeads
  );
}

/** Joins the members' exports into whole blocks. */
export function joinKvParts(
  dims: KvDims,
  blocks: number,
  parts: { part: KvPart; data: Float32Array }[],
): Float32Array {
  for (const { part, data } of parts)
    if (data.length !== partFloats(dims, part, blocks))
      throw new Error(`a member exported ${data.length} floats, expected ${partFloats(dims, part, blocks)}`);
  if (parts.length === 1 && isWhole(dims, parts[0]!.part)) return parts[0]!.data;
  const whole = new Float32Array(blocks * dims.numLayers * 2 * dims.blockSize * dims.kvHeads * dims.headDim);
  for (const { part, data } of parts)
    walk(dims, part, blocks, (w, l, n) => whole.set(data.subarray(l, l + n), w));
  return whole;
}

/** Splits whole blocks into what each member imports (the member's import checks the size). */
export function splitKvParts(
  dims: KvDims,
  blocks: number,
  whole: Float32Array,
  parts: KvPart[],
): Float32Array[] {
  if (parts.length === 1 && isWhole(dims, parts[0]!)) return [whole];
  return parts.map((part) => {
    const data = new Float32Array(partFloats(dims, part, blocks));
    walk(dims, part, blocks, (w, l, n) => data.set(whole.subarray(w, w + n), l));
    return data;
  });
}
