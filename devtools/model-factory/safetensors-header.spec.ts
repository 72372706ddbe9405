import assert from "node:assert/strict";
import path from "node:path";
import { parseSafetensorsHeader, readSafetensorsHeader } from "./safetensors-header.ts";

const reference = path.resolve(import.meta.dirname, "../../services/worker/testdata/hf-reference");

describe("safetensors-header", () => {
  it("reads a reference checkpoint's header in file order", async () => {
    const h = await readSafetensorsHeader(path.join(reference, "tiny-qwen2/model.safetensors"));
    assert.deepEqual(h.metadata, { format: "pt" });
    assert.equal(h.dataStart, 8 + 2656);
    assert.deepEqual(h.tensors[0], [
      "model.embed_tokens.weight",
      { dtype: "F32", shape: [512, 96], data_offsets: [0, 196608] },
    ]);
    assert.equal(h.tensors.length, 26);
  });

  it("rejects truncated input", () => {
    assert.throws(() => parseSafetensorsHeader(new Uint8Array(4)), /shorter than 8 bytes/);
    const b = new Uint8Array(16);
    b[0] = 100;
    assert.throws(() => parseSafetensorsHeader(b), /past the end/);
  });
});
