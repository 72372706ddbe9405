// Reads back the header of a .safetensors file: what this folder's writer wrote, for checks and summaries.
// (The worker's loader has its own full reader; this one only parses and validates the header.)
import { open } from "node:fs/promises";
import { Code, TesseraError } from "../../services/kernel/errors.ts";

export interface HeaderEntry {
  readonly dtype: string;
  readonly shape: number[];
  readonly data_offsets: [number, number];
}

export interface SafetensorsHeader {
  readonly metadata: Record<string, string>;
  /** Tensors in file order. */
  readonly tensors: [string, HeaderEntry][];
  /** Where the data starts: 8 + the header length. */
  readonly dataStart: number;
}

/** Parses the header at the start of `bytes` (which may be just the first 8 + header-length bytes). */
export function parseSafetensorsHeader(bytes: Uint8Array): SafetensorsHeader {
  if (bytes.length < 8) throw new TesseraError(Code.INVALID_ARGUMENT, "safetensors: shorter than 8 bytes");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const len = Number(view.getBigUint64(0, true));
  if (8 + len > bytes.length)
    throw new TesseraError(Code.INVALID_ARGUMENT, "safetensors: header runs past the end");
  const parsed = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + len))) as Record<string, unknown>;
  const metadata = (parsed["__metadata__"] ?? {}) as Record<string, string>;
  const tensors = Object.entries(parsed)
    .filter(([k]) => k !== "__metadata__")
    .map(([k, v]) => [k, v as HeaderEntry] as [string, HeaderEntry]);
  return { metadata, tensors, dataStart: 8 + len };
}

/** Reads and parses the header of a file without reading its data. */
export async function readSafetensorsHeader(file: string): Promise<SafetensorsHeader> {
  const fh = await open(file, "r");
  try {
    const lenBuf = Buffer.alloc(8);
    await fh.read(lenBuf, 0, 8, 0);
    const len = Number(lenBuf.readBigUInt64LE(0));
    const all = Buffer.alloc(8 + len);
    await fh.read(all, 0, all.length, 0);
    return parseSafetensorsHeader(all);
  } finally {
    await fh.close();
  }
}
