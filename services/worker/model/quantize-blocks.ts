// Block-wise weight-only quantization of a matrix W [out, in] into com.microsoft MatMulNBits's layout:
// each row is cut into blocks of `blockSize` input features; a block keeps one float32 scale and, when
// asymmetric, one zero point; its values become `bits`-bit unsigned codes q with w ~= (q - zero) * scale.
// Layout (onnxruntime contrib op MatMulNBits): B [out, blocks, blockSize * bits / 8] uint8, 4-bit codes
// two to a byte, the first in the low nibble; scales [out * blocks] float32; zero points, when present,
// [out, ceil(blocks * bits / 8)] uint8 packed the same way. Without zero points MatMulNBits takes
// 2^(bits-1) (8 or 128), which is our symmetric form: scale = max|w| / (2^(bits-1) - 1).
// Written here rather than taken from a library: no npm package writes this layout, and it is a
// few typed-array loops (the base preset's 85 M weights quantize in well under a second).
import { TesseraError } from "../../kernel/errors.ts";

export type QuantBits = 4 | 8;

/** One scale (and zero point) per output feature instead of per block: int8 only (quantize-channels.ts). */
export const PER_CHANNEL = "channel";

export interface QuantOptions {
  bits: QuantBits;
  /** Input features per block, or PER_CHANNEL: the whole row. */
  blockSize: number | typeof PER_CHANNEL;
  symmetric: boolean;
}

/** Options of block-wise codes (MatMulNBits's layout). */
export type BlockQuantOptions = QuantOptions & { blockSize: number };

export function isPerChannel(q: QuantOptions): boolean {
  return q.blockSize === PER_CHANNEL;
}

/** `q` when its codes are block-wise, else undefined. */
export function blockWise(q: QuantOptions | undefined): BlockQuantOptions | undefined {
  return q && typeof q.blockSize === "number" ? { ...q, blockSize: q.blockSize } : undefined;
}

export interface QuantizedMatrix {
  out: number;
  in: number;
  blocks: number;
  /** [out, blocks, blockSize * bits / 8] */
  packed: Uint8Array;
  /** [out * blocks] */
  scales: Float32Array;
  /** [out, ceil(blocks * bits / 8)], asymmetric only. */
  zeroPoints?: Uint8Array | undefined;
}

/** `int4 block 32 symmetric` for the start-up log; `none` unquantized. */
export function quantizationLabel(q: QuantOptions | undefined): string {
  if (!q) return "none";
  const blocks = isPerChannel(q) ? "per channel" : `block ${q.blockSize}`;
  return `int${q.bits} ${blocks} ${q.symmetric ? "symmetric" : "asymmetric"}`;
}

/**
 * The revision a worker reports (ListModels, its KV blocks' header): the checkpoint's, with the
 * quantization when the weights are quantized. Quantized weights give other logits, so a router's
 * response cache (keyed by model and revision) and the remote KV tier must not mix a float worker's
 * answers or blocks with a quantized one's during a rollout that changes spec.model.quantization.
 */
export function servedRevision(checkpointRevision: string, quantization: QuantOptions | undefined): string {
  if (!quantization) return checkpointRevision;
  const scheme = quantization.symmetric ? "sym" : "asym";
  const blocks = isPerChannel(quantization) ? PER_CHANNEL : `b${quantization.blockSize}`;
  return `${checkpointRevision}+int${quantization.bits}-${blocks}-${scheme}`;
}

/**
 * Block sizes MatMulNBits accepts: a power of two, at least 16; or `channel` (one scale per output
 * feature), at 8 bits only: 4-bit codes with one scale per row lose too much, and MatMulInteger, which
 * runs per-channel codes, reads whole bytes, so they would take int8's memory.
 */
export function blockSizeProblem(blockSize: number | string, bits?: QuantBits): string | undefined {
  if (blockSize === PER_CHANNEL)
    return bits === 4
      ? "applies to int8 only: int4 takes a power of two, at least 16 (default 128)"
      : undefined;
  const ok =
    typeof blockSize === "number" &&
    Number.isInteger(blockSize) &&
    blockSize >= 16 &&
    (blockSize & (blockSize - 1)) === 0;
  return ok ? undefined : "must be a power of two, at least 16 (16, 32, 64, 128, ...), or channel (int8)";
}

export function quantizeBlocks(
  w: Float32Array,
  out: number,
  inDim: number,
  o: BlockQuantOptions,
): QuantizedMatrix {
  const problem = blockSizeProblem(o.blockSize);
  if (problem) throw TesseraError.invalidArgument("quantization block size", `${o.blockSize} ${problem}`);
  const blocks = Math.ceil(inDim / o.blockSize);
  const blobBytes = (o.blockSize * o.bits) / 8;
  const packed = new Uint8Array(out * blocks * blobBytes);
  const scales = new Float32Array(out * blocks);
  const zpRow = Math.ceil((blocks * o.bits) / 8);
  const zeroPoints = o.symmetric ? undefined : new Uint8Array(out * zpRow);
  const maxCode = (1 << o.bits) - 1;
  const mid = 1 << (o.bits - 1);
  const codes = new Uint8Array(o.blockSize);
  for (let r = 0; r < out; r++) {
    for (let b = 0; b < blocks; b++) {
      const start = r * inDim + b * o.blockSize;
      const end = r * inDim + Math.min((b + 1) * o.blockSize, inDim);
      let lo = 0;
      let hi = 0;
      for (let i = start; i < end; i++) {
        const v = w[i]!;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      let scale: number;
      let zero: number;
      if (o.symmetric) {
        scale = Math.max(-lo, hi) / (mid - 1);
        zero = mid;
      } else {
        scale = (hi - lo) / maxCode;
        zero = scale === 0 ? mid : Math.min(maxCode, Math.max(0, Math.round(-lo / scale)));
      }
      const inv = scale === 0 ? 0 : 1 / scale;
      codes.fill(zero);
      for (let i = start; i < end; i++) {
        const q = Math.round(w[i]! * inv) + zero;
        codes[i - start] = q < 0 ? 0 : q > maxCode ? maxCode : q;
      }
      scales[r * blocks + b] = scale;
      pack(codes, o.bits, packed, (r * blocks + b) * blobBytes);
      if (zeroPoints) putCode(zeroPoints, r * zpRow, b, zero, o.bits);
    }
  }
  return { out, in: inDim, blocks, packed, scales, zeroPoints };
}

/** w ~= (q - zero) * scale, back to float32 [out, in]: for tests and reference checks. */
export function dequantizeBlocks(q: QuantizedMatrix, o: BlockQuantOptions): Float32Array {
  const w = new Float32Array(q.out * q.in);
  const blobBytes = (o.blockSize * o.bits) / 8;
  const zpRow = Math.ceil((q.blocks * o.bits) / 8);
  for (let r = 0; r < q.out; r++) {
    for (let c = 0; c < q.in; c++) {
      const b = Math.floor(c / o.blockSize);
      const zero = q.zeroPoints ? getCode(q.zeroPoints, r * zpRow, b, o.bits) : 1 << (o.bits - 1);
      const code = getCode(q.packed, (r * q.blocks + b) * blobBytes, c % o.blockSize, o.bits);
      w[r * q.in + c] = (code - zero) * q.scales[r * q.blocks + b]!;
    }
  }
  return w;
}

function pack(codes: Uint8Array, bits: QuantBits, dst: Uint8Array, at: number): void {
  if (bits === 8) {
    dst.set(codes, at);
    return;
  }
  for (let i = 0; i < codes.length; i += 2) dst[at + i / 2] = codes[i]! | (codes[i + 1]! << 4);
}

function putCode(dst: Uint8Array, at: number, index: number, code: number, bits: QuantBits): void {
  if (bits === 8) dst[at + index] = code;
  else dst[at + (index >> 1)]! |= index & 1 ? code << 4 : code;
}

function getCode(src: Uint8Array, at: number, index: number, bits: QuantBits): number {
  if (bits === 8) return src[at + index]!;
  const byte = src[at + (index >> 1)]!;
  return index & 1 ? byte >> 4 : byte & 15;
}
