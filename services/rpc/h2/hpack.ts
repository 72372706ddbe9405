// HPACK (RFC 7541) for h2-connection.ts. Decoding uses hpack.js, which covers what clients send
// (Huffman strings, the dynamic table and its size updates). Encoding is our own and simple: every
// field a literal without indexing and without Huffman, `:status 200` from the static table. That is
// valid HPACK whatever the peer's table, and leaves the connection no encoder state to keep.
import { createRequire } from "node:module";

interface HpackDecompressor {
  write(block: Buffer): void;
  execute(): void;
  read(): { name: string; value: string } | null;
  on(event: "error", listener: (err: Error) => void): void;
  updateTableSize(size: number): void;
}
interface HpackModule {
  decompressor: { create(options: { table: { size: number } }): HpackDecompressor };
}
const hpack = createRequire(import.meta.url)("hpack.js") as HpackModule;

/** A header field list as decoded, in order: [name, value, name, value, ...]. */
export type HeaderList = string[];

/** One connection's HPACK decoder: its dynamic table lives as long as the connection. */
export class HeaderDecoder {
  readonly #decompressor: HpackDecompressor;
  #error: Error | undefined;

  /** `tableSize`: the SETTINGS_HEADER_TABLE_SIZE this side announced (4096 by default). */
  constructor(tableSize = 4096) {
    this.#decompressor = hpack.decompressor.create({ table: { size: tableSize } });
    this.#decompressor.on("error", (err) => {
      this.#error = err;
    });
  }

  /** The fields of one whole header block; throws on a block HPACK cannot decode (COMPRESSION_ERROR). */
  decode(block: Buffer, maxListBytes: number): HeaderList {
    this.#decompressor.write(block);
    this.#decompressor.execute();
    const out: HeaderList = [];
    let size = 0;
    for (let field = this.#decompressor.read(); field !== null; field = this.#decompressor.read()) {
      size += field.name.length + field.value.length + 32;
      out.push(field.name, field.value);
    }
    const error = this.#error;
    if (error) throw new Error(`HPACK: ${error.message}`);
    if (size > maxListBytes) throw new HeaderListTooLarge(size, maxListBytes);
    return out;
  }
}

export class HeaderListTooLarge extends Error {
  constructor(size: number, max: number) {
    super(`header list of ${size} bytes (as HPACK counts them) over the ${max} allowed`);
  }
}

/** Encodes `fields` ([name, value, ...], names in lower case) as one header block. */
export function encodeHeaders(fields: readonly string[]): Buffer {
  let length = 0;
  for (let i = 0; i < fields.length; i += 2) {
    if (fields[i] === ":status" && fields[i + 1] === "200") length += 1;
    else length += 1 + stringLength(fields[i]!) + stringLength(fields[i + 1]!);
  }
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  for (let i = 0; i < fields.length; i += 2) {
    if (fields[i] === ":status" && fields[i + 1] === "200") {
      out[at++] = 0x88; // indexed: static entry 8
      continue;
    }
    out[at++] = 0x00; // literal without indexing, new name
    at = writeString(out, at, fields[i]!);
    at = writeString(out, at, fields[i + 1]!);
  }
  return out;
}

function stringLength(value: string): number {
  const bytes = Buffer.byteLength(value, "latin1");
  return integerLength(bytes, 7) + bytes;
}

function writeString(out: Buffer, at: number, value: string): number {
  const bytes = Buffer.byteLength(value, "latin1");
  at = writeInteger(out, at, bytes, 7, 0x00);
  return at + out.write(value, at, "latin1");
}

/** Bytes an HPACK integer takes with an `prefix`-bit prefix (RFC 7541 5.1). */
function integerLength(value: number, prefix: number): number {
  const max = (1 << prefix) - 1;
  if (value < max) return 1;
  let n = 1;
  for (let rest = value - max; rest >= 128; rest = Math.floor(rest / 128)) n++;
  return n + 1;
}

function writeInteger(out: Buffer, at: number, value: number, prefix: number, high: number): number {
  const max = (1 << prefix) - 1;
  if (value < max) {
    out[at++] = high | value;
    return at;
  }
  out[at++] = high | max;
  let rest = value - max;
  while (rest >= 128) {
    out[at++] = (rest % 128) | 0x80;
    rest = Math.floor(rest / 128);
  }
  out[at++] = rest;
  return at;
}
