// The weight dtypes a checkpoint may store, and their widening to float32. The engine keeps a 16-bit
// checkpoint's matrices in their own dtype (so resident weights take the checkpoint's size) and widens
// each one inside the graph right before its product, computing in float32: onnxruntime's CPU kernels
// have no float16 or bfloat16 matrix product on x86 (graph/graph-weights.ts says what was measured).
// The functions here widen what is small enough to keep in float32 at load (norm weights, biases).

export type WeightDtype = "F32" | "F16" | "BF16";

export const BYTES_PER_ELEMENT: Record<WeightDtype, number> = { F32: 4, F16: 2, BF16: 2 };

export function isWeightDtype(s: string): s is WeightDtype {
  return s === "F32" || s === "F16" || s === "BF16";
}

/** bfloat16 is the upper half of a float32: shift it back into place. */
export function bf16ToF32(src: Uint16Array): Float32Array {
  const out = new Uint32Array(src.length);
  for (let i = 0; i < src.length; i++) out[i] = src[i]! << 16;
  return new Float32Array(out.buffer);
}

const F16_TABLE = buildF16Table();

/** IEEE half to float32 through a 64K-entry table (exact for every half, subnormals and inf/NaN included). */
export function f16ToF32(src: Uint16Array): Float32Array {
  const out = new Float32Array(src.length);
  for (let i = 0; i < src.length; i++) out[i] = F16_TABLE[src[i]!]!;
  return out;
}

function buildF16Table(): Float32Array {
  const table = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >> 10) & 0x1f;
    const frac = h & 0x3ff;
    if (exp === 0) table[h] = sign * frac * 2 ** -24;
    else if (exp === 31) table[h] = frac === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
    else table[h] = sign * (1 + frac / 1024) * 2 ** (exp - 15);
  }
  return table;
}

/** Views `bytes` (little-endian, as safetensors stores) as float32, converting when needed. */
export function toFloat32(bytes: Uint8Array, dtype: WeightDtype): Float32Array {
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
  switch (dtype) {
    case "F32":
      return new Float32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 4);
    case "F16":
      return f16ToF32(new Uint16Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 2));
    case "BF16":
      return bf16ToF32(new Uint16Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 2));
    default: {
      const never: never = dtype;
      throw new Error(`unknown dtype ${String(never)}`);
    }
  }
}
