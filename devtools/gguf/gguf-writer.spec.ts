import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { readGgufFileInfo } from "node-llama-cpp";
import { bool, f32, GGML_TYPE, int32s, str, strings, tensorBytes, u32, writeGguf } from "./gguf-writer.ts";

// node-llama-cpp's GGUF reader is an independent parser of what we write.
describe("gguf-writer", () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "gguf-writer-"));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("writes metadata and tensors that a GGUF reader gets back, data aligned to 32 bytes", async () => {
    const file = path.join(dir, "a.gguf");
    const matrix = Float32Array.from({ length: 3 * 32 }, (_, i) => i);
    const vector = Float32Array.of(1, 2, 3);
    const metadata = new Map([
      ["general.architecture", str("llama")],
      ["llama.block_count", u32(7)],
      ["llama.rope.freq_base", f32(10000)],
      ["tokenizer.ggml.add_bos_token", bool(false)],
      ["tokenizer.ggml.tokens", strings(["a", "b", "ĠΩ"])],
      ["tokenizer.ggml.token_type", int32s([1, 3, -1])],
    ]);
    const bytes = writeGguf(file, metadata, [
      { name: "v", type: "F32", shape: [3], data: () => new Uint8Array(vector.buffer) },
      { name: "m", type: "F32", shape: [3, 32], data: () => new Uint8Array(matrix.buffer) },
    ]);
    assert.equal(bytes, fs.statSync(file).size);
    const info = await readGgufFileInfo(file, { readTensorInfo: true });
    assert.equal(info.version, 3);
    const m = info.metadata as unknown as Record<string, Record<string, unknown>>;
    assert.equal(m["general"]!["architecture"], "llama");
    assert.deepEqual(m["llama"], { block_count: 7, rope: { freq_base: 10000 } });
    const tok = (m["tokenizer"]!["ggml"] ?? {}) as Record<string, unknown>;
    assert.deepEqual(tok["tokens"], ["a", "b", "ĠΩ"]);
    assert.deepEqual(tok["token_type"], [1, 3, -1]);
    assert.equal(tok["add_bos_token"], false);
    const tensors = info.fullTensorInfo!;
    assert.deepEqual(
      tensors.map((t) => [t.name, t.dimensions.map(Number), t.ggmlType, Number(t.offset)]),
      [
        ["v", [3], GGML_TYPE.F32, 0],
        ["m", [32, 3], GGML_TYPE.F32, 32],
      ],
    );
    const raw = fs.readFileSync(file);
    const at = Number(tensors[1]!.fileOffset);
    assert.equal(at % 32, 0);
    assert.deepEqual(
      new Float32Array(raw.buffer.slice(raw.byteOffset + at, raw.byteOffset + at + 384)),
      matrix,
    );
  });

  it("sizes block formats per 32 values and refuses rows that are not whole blocks", () => {
    assert.equal(tensorBytes("Q8_0", [4, 64]), 4 * 2 * 34);
    assert.equal(tensorBytes("Q4_0", [4, 64]), 4 * 2 * 18);
    assert.throws(() => tensorBytes("Q4_0", [4, 48]), /multiple of 32/);
  });

  it("refuses a tensor whose data is not the size its shape says", () => {
    const file = path.join(dir, "bad.gguf");
    assert.throws(
      () =>
        writeGguf(file, new Map(), [{ name: "w", type: "F32", shape: [4], data: () => new Uint8Array(12) }]),
      /w has 12 bytes, expected 16/,
    );
  });
});
