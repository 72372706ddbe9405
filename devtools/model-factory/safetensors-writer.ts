// Writes tensors to .safetensors files as the Python `safetensors` library does (header JSON with
// `__metadata__` first and tensors sorted by name, padded with spaces to a multiple of 8 bytes), streaming
// each tensor's values to disk chunk by chunk so that a checkpoint never has to fit in memory. With a
// maximum shard size it splits the tensors like `save_pretrained` does, into
// model-00001-of-0000N.safetensors files plus model.safetensors.index.json.

import { open, writeFile } from "node:fs/promises";
import { endianness } from "node:os";
import path from "node:path";
import { Code, TesseraError } from "../../services/kernel/errors.ts";
import { f32ArrayToBf16, f32ArrayToF16 } from "./dtype-convert.ts";
import { toPythonJson } from "./python-json.ts";

export type SafetensorsDtype = "F32" | "F16" | "BF16";

export const DTYPE_BYTES: Readonly<Record<SafetensorsDtype, number>> = { F32: 4, F16: 2, BF16: 2 };

/** One tensor to write; its values are produced lazily, when the file is written. */
export interface TensorSource {
  readonly name: string;
  readonly dtype: SafetensorsDtype;
  readonly shape: readonly number[];
  /**
   * The values in row-major order as float32 chunks adding up to the element count. Called once per
   * write; a chunk must not be modified after it is yielded (it may still be in flight to disk).
   */
  chunks(): Iterable<Float32Array>;
}

export const SINGLE_FILE_NAME = "model.safetensors";
export const INDEX_FILE_NAME = "model.safetensors.index.json";

export function elementCount(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

export function tensorByteSize(t: Pick<TensorSource, "dtype" | "shape">): number {
  return elementCount(t.shape) * DTYPE_BYTES[t.dtype];
}

/** The order tensors take inside a file: wider dtypes first, then by name (byte order), as safetensors does. */
export function fileOrder<T extends Pick<TensorSource, "name" | "dtype">>(tensors: readonly T[]): T[] {
  return [...tensors].sort((a, b) => {
    const w = DTYPE_BYTES[b.dtype] - DTYPE_BYTES[a.dtype];
    if (w !== 0) return w;
    return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
}

/**
 * The bytes before the data: an 8-byte little-endian length, then the header JSON padded with spaces to
 * a multiple of 8. `tensors` must already be in file order.
 */
export function encodeHeader(
  tensors: readonly Pick<TensorSource, "name" | "dtype" | "shape">[],
  metadata: Readonly<Record<string, string>> = { format: "pt" },
): Buffer {
  const header: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  for (const t of tensors) {
    if (t.name === "__metadata__" || Object.hasOwn(header, t.name)) {
      throw TesseraError.invalidArgument(
        "tensors",
        `duplicate or reserved tensor name ${JSON.stringify(t.name)}`,
      );
    }
    if (!t.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw TesseraError.invalidArgument(t.name, `bad shape [${t.shape.join(", ")}]`);
    }
    const size = tensorByteSize(t);
    header[t.name] = { dtype: t.dtype, shape: [...t.shape], data_offsets: [offset, offset + size] };
    offset += size;
  }
  const json = Buffer.from(JSON.stringify(header), "utf8");
  const padded = Math.ceil(json.length / 8) * 8;
  const out = Buffer.alloc(8 + padded, 0x20);
  out.writeBigUInt64LE(BigInt(padded), 0);
  json.copy(out, 8);
  return out;
}

function encodeChunk(chunk: Float32Array, dtype: SafetensorsDtype): Uint8Array {
  switch (dtype) {
    case "F32":
      return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    case "F16": {
      const h = f32ArrayToF16(chunk);
      return new Uint8Array(h.buffer, h.byteOffset, h.byteLength);
    }
    case "BF16": {
      const h = f32ArrayToBf16(chunk);
      return new Uint8Array(h.buffer, h.byteOffset, h.byteLength);
    }
    default: {
      const never: never = dtype;
      throw TesseraError.invalidArgument("dtype", `unsupported dtype ${String(never)}`);
    }
  }
}

/** Writes one .safetensors file, returning its size in bytes. */
export async function writeSafetensorsFile(
  file: string,
  tensors: readonly TensorSource[],
  metadata: Readonly<Record<string, string>> = { format: "pt" },
): Promise<number> {
  if (endianness() !== "LE")
    throw new TesseraError(Code.UNIMPLEMENTED, "safetensors writing needs a little-endian host");
  const ordered = fileOrder(tensors);
  const header = encodeHeader(ordered, metadata);
  const fh = await open(file, "w");
  let written = 0;
  // One write stays in flight while the next chunk is generated.
  let pending: Promise<void> = Promise.resolve();
  const writeAll = async (bytes: Uint8Array): Promise<void> => {
    let done = 0;
    while (done < bytes.length) {
      const { bytesWritten } = await fh.write(bytes, done, bytes.length - done);
      done += bytesWritten;
    }
  };
  const enqueue = async (bytes: Uint8Array): Promise<void> => {
    await pending;
    pending = writeAll(bytes);
    written += bytes.length;
  };
  try {
    await enqueue(header);
    for (const t of ordered) {
      const want = elementCount(t.shape);
      let got = 0;
      for (const chunk of t.chunks()) {
        got += chunk.length;
        if (got > want) break;
        await enqueue(encodeChunk(chunk, t.dtype));
      }
      if (got !== want) {
        throw new TesseraError(
          Code.INTERNAL,
          `tensor ${t.name}: produced ${got} values for shape [${t.shape}] (${want})`,
        );
      }
    }
    await pending;
  } finally {
    await pending.catch(() => undefined);
    await fh.close();
  }
  return written;
}

/**
 * Groups tensors into shards of at most `maxShardBytes` of data, in the given (state-dict) order, as
 * huggingface_hub's split_torch_state_dict_into_shards does: a tensor larger than the limit gets a
 * shard of its own.
 */
export function planShards<T extends Pick<TensorSource, "dtype" | "shape">>(
  tensors: readonly T[],
  maxShardBytes: number,
): T[][] {
  if (!(maxShardBytes > 0))
    throw TesseraError.invalidArgument("maxShardBytes", "must be a positive number of bytes");
  const shards: T[][] = [];
  let current: T[] = [];
  let size = 0;
  for (const t of tensors) {
    const bytes = tensorByteSize(t);
    if (bytes > maxShardBytes) {
      shards.push([t]);
      continue;
    }
    if (size + bytes > maxShardBytes && current.length > 0) {
      shards.push(current);
      current = [];
      size = 0;
    }
    current.push(t);
    size += bytes;
  }
  if (current.length > 0) shards.push(current);
  return shards;
}

export function shardFileName(index: number, count: number): string {
  const pad = (n: number) => String(n).padStart(5, "0");
  return `model-${pad(index + 1)}-of-${pad(count)}.safetensors`;
}

export interface WrittenWeights {
  /** File names written into the folder, weights first, then the index when sharded. */
  readonly files: string[];
  /** Bytes of tensor data (headers excluded): the index's metadata.total_size. */
  readonly totalSize: number;
  /** File bytes, headers included. */
  readonly fileBytes: number;
  /** tensor name → file name. */
  readonly weightMap: Readonly<Record<string, string>>;
}

/**
 * Writes `tensors` into `dir`: one model.safetensors, or, when `maxShardBytes` is given and the data
 * does not fit in one shard, numbered shards and model.safetensors.index.json.
 */
export async function writeSafetensors(
  dir: string,
  tensors: readonly TensorSource[],
  options: { maxShardBytes?: number } = {},
): Promise<WrittenWeights> {
  const shards =
    options.maxShardBytes === undefined ? [[...tensors]] : planShards(tensors, options.maxShardBytes);
  if (shards.length === 0) shards.push([]);
  const names =
    shards.length === 1 ? [SINGLE_FILE_NAME] : shards.map((_, i) => shardFileName(i, shards.length));
  const weightMap: Record<string, string> = {};
  let totalSize = 0;
  let fileBytes = 0;
  for (const [i, shard] of shards.entries()) {
    const name = names[i]!;
    fileBytes += await writeSafetensorsFile(path.join(dir, name), shard);
    for (const t of shard) {
      weightMap[t.name] = name;
      totalSize += tensorByteSize(t);
    }
  }
  const files = [...names];
  if (shards.length > 1) {
    const index = { metadata: { total_size: totalSize }, weight_map: weightMap };
    const text = `${toPythonJson(index, { sortKeys: true })}\n`;
    await writeFile(path.join(dir, INDEX_FILE_NAME), text);
    files.push(INDEX_FILE_NAME);
    fileBytes += Buffer.byteLength(text);
  }
  return { files, totalSize, fileBytes, weightMap };
}
