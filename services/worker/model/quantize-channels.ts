// Per-channel int8 weight-only quantization (`--quantization int8`, the default block size `channel`):
// each output feature (a row of W [out, in]) keeps one float32 scale and, when asymmetric, one zero
// point; its values become signed 8-bit codes q with w ~= (q - zero) * scale. The codes are written
// transposed, [in, out], the B layout of onnxruntime's MatMulInteger (graph/graph-weights-channel.ts),
// whose u8 x s8 product runs on the CPU's int8 matrix units where it has them (AMX, VNNI).
// Written here for the same reason as quantize-blocks.ts: a few typed-array loops in a layout no npm
// package writes.
import type { QuantOptions } from "./quantize-blocks.ts";

export interface ChannelQuantized {
  out: number;
  in: number;
  /** Signed codes [in, out] (the transpose of W's layout), as bytes. */
  codes: Int8Array;
  /** [out] */
  scales: Float32Array;
  /** [out], asymmetric only. */
  zeroPoints?: Int8Array | undefined;
}

export function quantizeChannels(
  w: Float32Array,
  out: number,
  inDim: number,
  o: Pick<QuantOptions, "symmetric">,
): ChannelQuantized {
  const codes = new Int8Array(inDim * out);
  const scales = new Float32Array(out);
  const zeroPoints = o.symmetric ? undefined : new Int8Array(out);
  for (let r = 0; r < out; r++) {
    const row = r * inDim;
    let lo = 0;
    let hi = 0;
    for (let c = 0; c < inDim; c++) {
      const v = w[row + c]!;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    // Symmetric: codes -127..127 around 0. Asymmetric: -128..127 over [lo, hi], zero where 0 falls.
    const scale = o.symmetric ? Math.max(-lo, hi) / 127 : (hi - lo) / 255;
    const zero =
      o.symmetric || scale === 0 ? 0 : Math.max(-128, Math.min(127, Math.round(-lo / scale) - 128));
    const inv = scale === 0 ? 0 : 1 / scale;
    for (let c = 0; c < inDim; c++) {
      const q = Math.round(w[row + c]! * inv) + zero;
      codes[c * out + r] = q < -128 ? -128 : q > 127 ? 127 : q;
    }
    scales[r] = scale;
    if (zeroPoints) zeroPoints[r] = zero;
  }
  return { out, in: inDim, codes, scales, zeroPoints };
}

/** w ~= (q - zero) * scale, back to float32 [out, in]: for tests and reference checks. */
export function dequantizeChannels(q: ChannelQuantized): Float32Array {
  const w = new Float32Array(q.out * q.in);
  for (let r = 0; r < q.out; r++) {
    const zero = q.zeroPoints?.[r] ?? 0;
    for (let c = 0; c < q.in; c++) w[r * q.in + c] = (q.codes[c * q.out + r]! - zero) * q.scales[r]!;
  }
  return w;
}
