// Reader of the safetensors format: 8-byte little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets: [begin, end]}}, then the tensor bytes. Tensors are read one at a
// time from the file, so a checkpoint never needs to fit in memory twice.
import fs from "node:fs";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { BYTES_PER_ELEMENT, isWeightDtype, toFloat32, type WeightDtype } from "./dtype.ts";
import { type ByteRange, slicedShape, sliceRanges, type TensorSlice } from "./tensor-slice.ts";

/** What a file may store: float weights, and int32 for the packed codes of GPTQ/AWQ checkpoints. */
export type StoredDtype = WeightDtype | "I32";

export interface TensorInfo {
  dtype: StoredDtype;
  shape: number[];
  /** Absolute byte offset of the data in the file. */
  offset: number;
  byteLength: number;
}

export interface Tensor {
  shape: number[];
  data: Float32Array;
}

/** A tensor as the checkpoint stores it: its dtype's little-endian bytes, not widened. */
export interface StoredTensor {
  shape: number[];
  dtype: WeightDtype;
  bytes: Uint8Array;
}

const STORED_BYTES: Record<StoredDtype, number> = { ...BYTES_PER_ELEMENT, I32: 4 };

const MAX_HEADER_BYTES = 100 * 1024 * 1024;

export class SafetensorsFile {
  readonly path: string;
  readonly tensors: ReadonlyMap<string, TensorInfo>;

  private constructor(path: string, tensors: Map<string, TensorInfo>) {
    this.path = path;
    this.tensors = tensors;
  }

  static open(path: string): SafetensorsFile {
    let fd: number;
    try {
      fd = fs.openSync(path, "r");
    } catch (err) {
      throw new TesseraError(Code.NOT_FOUND, `cannot open ${path}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    try {
      return new SafetensorsFile(path, readHeader(fd, path));
    } finally {
      fs.closeSync(fd);
    }
  }

  has(name: string): boolean {
    return this.tensors.has(name);
  }

  /** Reads one tensor as float32 (half-precision weights are widened). */
  read(name: string): Tensor {
    return widened(this.readStored(name));
  }

  /** Reads one slice of a tensor (rows, columns or a vector range) without reading the rest. */
  readSlice(name: string, slice: TensorSlice): Tensor {
    return widened(this.readStored(name, slice));
  }

  /** Reads a tensor, or one slice of it, in the dtype the file stores it in. */
  readStored(name: string, slice?: TensorSlice): StoredTensor {
    const info = this.info(name);
    const dtype = info.dtype;
    if (dtype === "I32") {
      throw new TesseraError(
        Code.INVALID_ARGUMENT,
        `${this.path}: tensor ${name} is int32, not a float weight`,
      );
    }
    return { ...this.readBytes(name, info, slice), dtype };
  }

  /** Reads a whole int32 tensor (packed GPTQ/AWQ codes, g_idx). */
  readInt32(name: string): { shape: number[]; data: Int32Array } {
    const info = this.info(name);
    if (info.dtype !== "I32") {
      throw new TesseraError(
        Code.INVALID_ARGUMENT,
        `${this.path}: tensor ${name} is ${info.dtype}, expected I32`,
      );
    }
    const { shape, bytes } = this.readBytes(name, info);
    return { shape, data: new Int32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4) };
  }

  private readBytes(
    name: string,
    info: TensorInfo,
    slice?: TensorSlice,
  ): { shape: number[]; bytes: Uint8Array } {
    if (!slice)
      return {
        shape: info.shape,
        bytes: this.readRanges(name, info, [{ offset: 0, length: info.byteLength }]),
      };
    const shape = slicedShape(info.shape, slice);
    const ranges = sliceRanges(info.shape, STORED_BYTES[info.dtype], slice);
    return { shape, bytes: this.readRanges(name, info, ranges) };
  }

  private info(name: string): TensorInfo {
    const info = this.tensors.get(name);
    if (!info) throw new TesseraError(Code.NOT_FOUND, `${this.path}: no tensor ${name}`);
    return info;
  }

  /** The bytes of `ranges` (relative to the tensor's start), one after the other. */
  private readRanges(name: string, info: TensorInfo, ranges: readonly ByteRange[]): Uint8Array {
    const bytes = new Uint8Array(ranges.reduce((n, r) => n + r.length, 0));
    const fd = fs.openSync(this.path, "r");
    try {
      let at = 0;
      for (const range of ranges) {
        let done = 0;
        while (done < range.length) {
          const n = fs.readSync(fd, bytes, at + done, range.length - done, info.offset + range.offset + done);
          if (n === 0) throw corrupt(this.path, `tensor ${name} is cut short`);
          done += n;
        }
        at += range.length;
      }
    } finally {
      fs.closeSync(fd);
    }
    return bytes;
  }
}

/** A stored tensor as float32 (half-precision values widened exactly). */
export function widened(t: StoredTensor): Tensor {
  return { shape: t.shape, data: toFloat32(t.bytes, t.dtype) };
}

function corrupt(path: string, why: string): TesseraError {
  return new TesseraError(Code.INVALID_ARGUMENT, `corrupt safetensors file ${path}: ${why}`);
}

function readHeader(fd: number, path: string): Map<string, TensorInfo> {
  const fileSize = fs.fstatSync(fd).size;
  const lenBuf = Buffer.alloc(8);
  if (fs.readSync(fd, lenBuf, 0, 8, 0) !== 8) throw corrupt(path, "shorter than 8 bytes");
  const headerLen = Number(lenBuf.readBigUInt64LE(0));
  if (headerLen <= 1 || headerLen > MAX_HEADER_BYTES || 8 + headerLen > fileSize) {
    throw corrupt(path, `header length ${headerLen} does not fit a ${fileSize}-byte file`);
  }
  const headerBuf = Buffer.alloc(headerLen);
  fs.readSync(fd, headerBuf, 0, headerLen, 8);
  let header: unknown;
  try {
    header = JSON.parse(headerBuf.toString("utf8"));
  } catch {
    throw corrupt(path, "header is not JSON");
  }
  if (typeof header !== "object" || header === null || Array.isArray(header)) {
    throw corrupt(path, "header is not a JSON object");
  }
  const dataStart = 8 + headerLen;
  const tensors = new Map<string, TensorInfo>();
  for (const [name, entry] of Object.entries(header as Record<string, unknown>)) {
    if (name === "__metadata__") continue;
    tensors.set(name, parseEntry(path, name, entry, dataStart, fileSize));
  }
  return tensors;
}

function parseEntry(
  path: string,
  name: string,
  entry: unknown,
  dataStart: number,
  fileSize: number,
): TensorInfo {
  const e = entry as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
  if (typeof e.dtype !== "string" || !(isWeightDtype(e.dtype) || e.dtype === "I32")) {
    throw corrupt(
      path,
      `tensor ${name} has unsupported dtype ${String(e.dtype)} (supported: F32, F16, BF16, and I32 for GPTQ/AWQ codes)`,
    );
  }
  const shape = e.shape;
  const offsets = e.data_offsets;
  if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
    throw corrupt(path, `tensor ${name} has an invalid shape`);
  }
  if (
    !Array.isArray(offsets) ||
    offsets.length !== 2 ||
    !offsets.every((o) => Number.isInteger(o) && o >= 0)
  ) {
    throw corrupt(path, `tensor ${name} has invalid data_offsets`);
  }
  const [begin, end] = offsets as [number, number];
  const elements = (shape as number[]).reduce((a, b) => a * b, 1);
  const byteLength = end - begin;
  if (byteLength !== elements * STORED_BYTES[e.dtype]) {
    throw corrupt(path, `tensor ${name}: ${byteLength} bytes for shape [${shape.join(", ")}] ${e.dtype}`);
  }
  if (dataStart + end > fileSize) throw corrupt(path, `tensor ${name} lies past the end of the file`);
  return { dtype: e.dtype, shape: shape as number[], offset: dataStart + begin, byteLength };
}
