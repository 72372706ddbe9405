// Writes a GGUF file (version 3, little-endian), the format llama.cpp loads: a header with typed
// metadata key/values and tensor descriptions, then every tensor's data, each aligned to 32 bytes.
// Layout (ggml's gguf.h / docs/gguf.md): "GGUF" u32 version, u64 tensor count, u64 metadata count;
// each key a string (u64 length + UTF-8), a u32 value type and the value (arrays: u32 item type,
// u64 count, items); each tensor its name, u32 dimension count, u64 dimensions innermost first
// (ggml's ne: a [rows, cols] row-major matrix is ne = [cols, rows]), u32 ggml type and u64 offset
// from the start of the data section. Tensors are written one at a time (their bytes come from a
// callback), so converting a checkpoint never holds more than one tensor in memory.
import fs from "node:fs";

/** ggml_type values of the formats we write. */
export const GGML_TYPE = { F32: 0, F16: 1, Q4_0: 2, Q8_0: 8 } as const;
export type GgmlTypeName = keyof typeof GGML_TYPE;

/** Elements per block and bytes per block of each type. */
const TYPE_LAYOUT: Readonly<Record<GgmlTypeName, { block: number; bytes: number }>> = {
  F32: { block: 1, bytes: 4 },
  F16: { block: 1, bytes: 2 },
  Q4_0: { block: 32, bytes: 18 },
  Q8_0: { block: 32, bytes: 34 },
};

const ALIGNMENT = 32;

/** gguf_type values. */
const VALUE_TYPE = { uint32: 4, int32: 5, float32: 6, bool: 7, string: 8, array: 9 } as const;

export type GgufScalar =
  | { type: "uint32"; value: number }
  | { type: "int32"; value: number }
  | { type: "float32"; value: number }
  | { type: "bool"; value: boolean }
  | { type: "string"; value: string };

export type GgufValue =
  | GgufScalar
  | { type: "array"; items: "string"; values: readonly string[] }
  | { type: "array"; items: "int32"; values: readonly number[] };

export const u32 = (value: number): GgufValue => ({ type: "uint32", value });
export const f32 = (value: number): GgufValue => ({ type: "float32", value });
export const bool = (value: boolean): GgufValue => ({ type: "bool", value });
export const str = (value: string): GgufValue => ({ type: "string", value });
export const strings = (values: readonly string[]): GgufValue => ({ type: "array", items: "string", values });
export const int32s = (values: readonly number[]): GgufValue => ({ type: "array", items: "int32", values });

export interface GgufTensor {
  name: string;
  type: GgmlTypeName;
  /** The tensor's shape as numpy/safetensors write it, outermost first ([rows, cols]). */
  shape: readonly number[];
  /** Its bytes in `type`'s layout, asked for when the tensor is written. */
  data: () => Uint8Array;
}

/** Bytes of a tensor of `shape` in `type`; the innermost dimension must be whole blocks. */
export function tensorBytes(type: GgmlTypeName, shape: readonly number[]): number {
  const { block, bytes } = TYPE_LAYOUT[type];
  const inner = shape[shape.length - 1] ?? 1;
  if (inner % block !== 0) throw new Error(`gguf: ${type} rows must be a multiple of ${block}, not ${inner}`);
  return (shape.reduce((a, b) => a * b, 1) / block) * bytes;
}

/** A growable little-endian byte buffer for the header. */
class HeaderBytes {
  private buf = Buffer.alloc(1 << 16);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.alloc(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }
  u32(v: number): void {
    this.room(4);
    this.length = this.buf.writeUInt32LE(v, this.length);
  }
  i32(v: number): void {
    this.room(4);
    this.length = this.buf.writeInt32LE(v, this.length);
  }
  u64(v: number): void {
    this.room(8);
    this.length = this.buf.writeBigUInt64LE(BigInt(v), this.length);
  }
  f32(v: number): void {
    this.room(4);
    this.length = this.buf.writeFloatLE(v, this.length);
  }
  u8(v: number): void {
    this.room(1);
    this.length = this.buf.writeUInt8(v, this.length);
  }
  string(s: string): void {
    const bytes = Buffer.from(s, "utf8");
    this.u64(bytes.length);
    this.room(bytes.length);
    this.length += bytes.copy(this.buf, this.length);
  }
  padTo(alignment: number): void {
    while (this.length % alignment !== 0) this.u8(0);
  }
  bytes(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

function writeValue(h: HeaderBytes, v: GgufValue): void {
  h.u32(VALUE_TYPE[v.type]);
  switch (v.type) {
    case "uint32":
      h.u32(v.value);
      return;
    case "int32":
      h.i32(v.value);
      return;
    case "float32":
      h.f32(v.value);
      return;
    case "bool":
      h.u8(v.value ? 1 : 0);
      return;
    case "string":
      h.string(v.value);
      return;
    case "array":
      h.u32(VALUE_TYPE[v.items]);
      h.u64(v.values.length);
      if (v.items === "string") for (const s of v.values) h.string(s);
      else for (const n of v.values) h.i32(n);
      return;
    default: {
      const never: never = v;
      throw new Error(`gguf: unknown value ${JSON.stringify(never)}`);
    }
  }
}

/** Writes `metadata` and `tensors` to `file` as GGUF v3; returns the bytes written. */
export function writeGguf(
  file: string,
  metadata: ReadonlyMap<string, GgufValue>,
  tensors: GgufTensor[],
): number {
  const h = new HeaderBytes();
  h.u32(0x46554747); // "GGUF"
  h.u32(3);
  h.u64(tensors.length);
  h.u64(metadata.size);
  for (const [key, value] of metadata) {
    h.string(key);
    writeValue(h, value);
  }
  const sizes = tensors.map((t) => tensorBytes(t.type, t.shape));
  let offset = 0;
  for (const [i, t] of tensors.entries()) {
    h.string(t.name);
    h.u32(t.shape.length);
    for (const d of [...t.shape].reverse()) h.u64(d);
    h.u32(GGML_TYPE[t.type]);
    h.u64(offset);
    offset += Math.ceil(sizes[i]! / ALIGNMENT) * ALIGNMENT;
  }
  h.padTo(ALIGNMENT);
  const fd = fs.openSync(file, "w");
  try {
    let written = fs.writeSync(fd, h.bytes());
    const zeros = new Uint8Array(ALIGNMENT);
    for (const [i, t] of tensors.entries()) {
      const data = t.data();
      if (data.length !== sizes[i])
        throw new Error(`gguf: tensor ${t.name} has ${data.length} bytes, expected ${sizes[i]}`);
      written += fs.writeSync(fd, data);
      const pad = (ALIGNMENT - (data.length % ALIGNMENT)) % ALIGNMENT;
      if (pad) written += fs.writeSync(fd, zeros, 0, pad);
    }
    return written;
  } finally {
    fs.closeSync(fd);
  }
}
