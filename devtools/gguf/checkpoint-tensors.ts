// The tensors of a Hugging Face checkpoint folder (model.safetensors, or shards listed by
// model.safetensors.index.json), read one at a time as float32 for the GGUF converter. The worker has
// its own loader; development tooling may not import it (scripts/import-direction.ts), and this needs
// only the header and a positioned read.
import fs from "node:fs";
import path from "node:path";
import { type HeaderEntry, parseSafetensorsHeader } from "../model-factory/safetensors-header.ts";
import { f16ToNumber } from "./ggml-quants.ts";

export interface CheckpointTensor {
  name: string;
  shape: number[];
  dtype: string;
  file: string;
  /** Absolute byte range in `file`. */
  start: number;
  end: number;
}

function readHeader(file: string): { dataStart: number; tensors: [string, HeaderEntry][] } {
  const fd = fs.openSync(file, "r");
  try {
    const len = Buffer.alloc(8);
    fs.readSync(fd, len, 0, 8, 0);
    const all = Buffer.alloc(8 + Number(len.readBigUInt64LE(0)));
    fs.readSync(fd, all, 0, all.length, 0);
    return parseSafetensorsHeader(all);
  } finally {
    fs.closeSync(fd);
  }
}

/** Every tensor of the checkpoint in `modelDir`, by name. */
export function listCheckpointTensors(modelDir: string): Map<string, CheckpointTensor> {
  const index = path.join(modelDir, "model.safetensors.index.json");
  const files = fs.existsSync(index)
    ? [
        ...new Set(
          Object.values(
            (JSON.parse(fs.readFileSync(index, "utf8")) as { weight_map: Record<string, string> }).weight_map,
          ),
        ),
      ]
    : ["model.safetensors"];
  const tensors = new Map<string, CheckpointTensor>();
  for (const f of files) {
    const file = path.join(modelDir, f);
    const header = readHeader(file);
    for (const [name, e] of header.tensors) {
      const [a, b] = e.data_offsets;
      tensors.set(name, {
        name,
        shape: e.shape,
        dtype: e.dtype,
        file,
        start: header.dataStart + a,
        end: header.dataStart + b,
      });
    }
  }
  return tensors;
}

/** A tensor's values as float32 (F32, F16 or BF16 on disk). */
export function readFloat32(t: CheckpointTensor): Float32Array {
  const bytes = Buffer.alloc(t.end - t.start);
  const fd = fs.openSync(t.file, "r");
  try {
    fs.readSync(fd, bytes, 0, bytes.length, t.start);
  } finally {
    fs.closeSync(fd);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (t.dtype) {
    case "F32":
      return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    case "F16":
      return Float32Array.from({ length: bytes.length / 2 }, (_, i) =>
        f16ToNumber(view.getUint16(2 * i, true)),
      );
    case "BF16": {
      const out = new Float32Array(bytes.length / 2);
      const bits = new Uint32Array(out.buffer);
      for (let i = 0; i < out.length; i++) bits[i] = view.getUint16(2 * i, true) << 16;
      return out;
    }
    default:
      throw new Error(`${t.name}: dtype ${t.dtype} is not supported (F32, F16, BF16)`);
  }
}
