// A slice of a checkpoint tensor along one axis, as tensor parallelism reads it: rows of a [out, in]
// projection (its output features: q/k/v, gate/up, lm_head) or columns (its input features: o_proj,
// down_proj), or a range of a vector (biases). Planned as byte ranges of the file so a rank reads only
// its part: one range for rows, one range per row for columns.
import { Code, TesseraError } from "../../kernel/errors.ts";

export interface TensorSlice {
  /** 0 = rows (or a vector's elements), 1 = columns of a matrix. */
  axis: 0 | 1;
  start: number;
  end: number;
}

export interface ByteRange {
  /** Byte offset from the tensor's first byte. */
  offset: number;
  length: number;
}

/** The shape of `slice` of a tensor of `shape`; throws INVALID_ARGUMENT when it does not fit. */
export function slicedShape(shape: readonly number[], slice: TensorSlice): number[] {
  const size = shape[slice.axis];
  if (size === undefined || (slice.axis === 1 && shape.length !== 2) || shape.length > 2)
    throw new TesseraError(Code.INVALID_ARGUMENT, `cannot slice axis ${slice.axis} of shape [${shape}]`);
  if (!Number.isInteger(slice.start) || slice.start < 0 || slice.end > size || slice.start >= slice.end)
    throw new TesseraError(
      Code.INVALID_ARGUMENT,
      `slice ${slice.start}:${slice.end} does not fit axis ${slice.axis} of shape [${shape}]`,
    );
  const out = [...shape];
  out[slice.axis] = slice.end - slice.start;
  return out;
}

/** The byte ranges holding `slice`, in row-major order of the sliced tensor. */
export function sliceRanges(
  shape: readonly number[],
  bytesPerElement: number,
  slice: TensorSlice,
): ByteRange[] {
  slicedShape(shape, slice);
  const rowElements = shape.length === 2 ? shape[1]! : 1;
  if (slice.axis === 0) {
    const rowBytes = rowElements * bytesPerElement;
    return [{ offset: slice.start * rowBytes, length: (slice.end - slice.start) * rowBytes }];
  }
  const rows = shape[0]!;
  const length = (slice.end - slice.start) * bytesPerElement;
  return Array.from({ length: rows }, (_, r) => ({
    offset: (r * rowElements + slice.start) * bytesPerElement,
    length,
  }));
}

/** Splits `size` into `parts` contiguous ranges differing by at most one; part `index`'s range. */
export function evenPart(size: number, parts: number, index: number): { start: number; end: number } {
  return { start: Math.floor((size * index) / parts), end: Math.floor((size * (index + 1)) / parts) };
}
