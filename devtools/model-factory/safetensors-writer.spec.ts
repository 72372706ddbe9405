import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseSafetensorsHeader } from "./safetensors-header.ts";
import {
  encodeHeader,
  planShards,
  shardFileName,
  type TensorSource,
  writeSafetensors,
  writeSafetensorsFile,
} from "./safetensors-writer.ts";

const reference = path.resolve(import.meta.dirname, "../../services/worker/testdata/hf-reference");

function fixed(
  name: string,
  shape: number[],
  values: number[],
  dtype: TensorSource["dtype"] = "F32",
): TensorSource {
  return {
    name,
    dtype,
    shape,
    *chunks() {
      // Two chunks to exercise streaming.
      const half = Math.floor(values.length / 2);
      yield new Float32Array(values.slice(0, half));
      yield new Float32Array(values.slice(half));
    },
  };
}

describe("safetensors-writer", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "tessera-st-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  for (const model of ["tiny-llama", "tiny-qwen2", "tiny-mixtral"]) {
    it(`rewrites the reference ${model} byte for byte`, async () => {
      const original = readFileSync(path.join(reference, model, "model.safetensors"));
      const h = parseSafetensorsHeader(original);
      // Shuffle the input order: the writer must sort as safetensors does.
      const sources = h.tensors.reverse().map(([name, e]): TensorSource => {
        const start = h.dataStart + e.data_offsets[0];
        const bytes = original.subarray(start, h.dataStart + e.data_offsets[1]);
        return fixed(name, e.shape, [...new Float32Array(new Uint8Array(bytes).buffer)]);
      });
      const file = path.join(dir, "model.safetensors");
      const size = await writeSafetensorsFile(file, sources);
      assert.equal(size, original.length);
      assert.ok(readFileSync(file).equals(original));
    });
  }

  it("pads the header with spaces to a multiple of 8 bytes", () => {
    const header = encodeHeader([{ name: "a", dtype: "F16", shape: [3] }]);
    const json = '{"__metadata__":{"format":"pt"},"a":{"dtype":"F16","shape":[3],"data_offsets":[0,6]}}';
    assert.equal(header.length % 8, 0);
    assert.equal(Number(header.readBigUInt64LE(0)), header.length - 8);
    assert.equal(header.subarray(8).toString("utf8"), json.padEnd(header.length - 8, " "));
  });

  it("writes F16 and BF16 little-endian and orders wider dtypes first", async () => {
    const file = path.join(dir, "x.safetensors");
    await writeSafetensorsFile(file, [
      fixed("h", [2], [1, -2], "F16"),
      fixed("b", [2], [1, Math.PI], "BF16"),
      fixed("f", [1, 1], [0.5]),
    ]);
    const bytes = readFileSync(file);
    const h = parseSafetensorsHeader(bytes);
    assert.deepEqual(
      h.tensors.map(([n, e]) => [n, e.dtype, e.data_offsets]),
      [
        ["f", "F32", [0, 4]],
        ["b", "BF16", [4, 8]],
        ["h", "F16", [8, 12]],
      ],
    );
    const data = bytes.subarray(h.dataStart);
    assert.equal(data.readFloatLE(0), 0.5);
    assert.deepEqual([data.readUInt16LE(4), data.readUInt16LE(6)], [0x3f80, 0x4049]);
    assert.deepEqual([data.readUInt16LE(8), data.readUInt16LE(10)], [0x3c00, 0xc000]);
    assert.equal(data.length, 12);
  });

  it("rejects a tensor whose values do not match its shape, and duplicate names", async () => {
    await assert.rejects(
      writeSafetensorsFile(path.join(dir, "x"), [fixed("a", [3], [1, 2])]),
      /produced 2 values/,
    );
    await assert.rejects(
      writeSafetensorsFile(path.join(dir, "x"), [fixed("a", [3], [1, 2, 3, 4])]),
      /produced 4 values/,
    );
    await assert.rejects(
      writeSafetensorsFile(path.join(dir, "y"), [fixed("a", [1], [1]), fixed("a", [1], [1])]),
      /duplicate/,
    );
  });

  it("plans shards in input order, giving an oversized tensor a shard of its own", () => {
    const t = (n: number) => ({ name: `t${n}`, dtype: "F32" as const, shape: [n] });
    const shards = planShards([t(10), t(10), t(30), t(5), t(20), t(1)], 80); // 40, 40, 120, 20, 80, 4 bytes
    assert.deepEqual(
      shards.map((s) => s.map((x) => x.name)),
      // huggingface_hub emits an oversized tensor's shard at once, before the one being filled.
      [["t30"], ["t10", "t10"], ["t5"], ["t20"], ["t1"]],
    );
    assert.equal(shardFileName(0, 3), "model-00001-of-00003.safetensors");
  });

  it("writes shards and an index, or a single model.safetensors when everything fits", async () => {
    const tensors = [
      fixed("model.embed_tokens.weight", [4, 2], [1, 2, 3, 4, 5, 6, 7, 8]),
      fixed("model.norm.weight", [2], [1, 1]),
      fixed("lm_head.weight", [4, 2], [8, 7, 6, 5, 4, 3, 2, 1]),
    ];
    const sharded = await writeSafetensors(dir, tensors, { maxShardBytes: 40 });
    assert.deepEqual(sharded.files, [
      "model-00001-of-00002.safetensors",
      "model-00002-of-00002.safetensors",
      "model.safetensors.index.json",
    ]);
    assert.equal(sharded.totalSize, 72);
    const index = readFileSync(path.join(dir, "model.safetensors.index.json"), "utf8");
    assert.equal(
      index,
      `${JSON.stringify(
        {
          metadata: { total_size: 72 },
          weight_map: {
            "lm_head.weight": "model-00002-of-00002.safetensors",
            "model.embed_tokens.weight": "model-00001-of-00002.safetensors",
            "model.norm.weight": "model-00001-of-00002.safetensors",
          },
        },
        null,
        2,
      )}\n`,
    );
    const second = parseSafetensorsHeader(readFileSync(path.join(dir, "model-00002-of-00002.safetensors")));
    assert.deepEqual(
      second.tensors.map(([n]) => n),
      ["lm_head.weight"],
    );

    const other = mkdtempSync(path.join(tmpdir(), "tessera-st-"));
    try {
      const single = await writeSafetensors(other, tensors, { maxShardBytes: 1000 });
      assert.deepEqual(single.files, ["model.safetensors"]);
      assert.deepEqual(readdirSync(other), ["model.safetensors"]);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});
