import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Code, TesseraError } from "../../services/kernel/errors.ts";
import { type CreateCheckpointOptions, createCheckpoint } from "./create-checkpoint.ts";
import { toBf16Bits, toF16Bits } from "./dtype-convert.ts";
import { parseSafetensorsHeader } from "./safetensors-header.ts";

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

function tensorData(file: string, name: string): { dtype: string; shape: number[]; bytes: Buffer } {
  const buf = readFileSync(file);
  const h = parseSafetensorsHeader(buf);
  const entry = h.tensors.find(([n]) => n === name)?.[1];
  assert.ok(entry, `no ${name} in ${file}`);
  return {
    dtype: entry.dtype,
    shape: entry.shape,
    bytes: buf.subarray(h.dataStart + entry.data_offsets[0], h.dataStart + entry.data_offsets[1]),
  };
}

function f32Values(bytes: Buffer): Float32Array {
  return new Float32Array(new Uint8Array(bytes).buffer);
}

describe("create-checkpoint", () => {
  let root: string;
  before(() => {
    root = mkdtempSync(path.join(tmpdir(), "tessera-ckpt-"));
  });
  after(() => rmSync(root, { recursive: true, force: true }));
  const dir = (name: string) => path.join(root, name);

  it("writes a complete tiny llama checkpoint", async () => {
    const s = await createCheckpoint({ arch: "llama", preset: "tiny", seed: 0, out: dir("llama") });
    assert.deepEqual(s.files, [
      "config.json",
      "generation_config.json",
      "model.safetensors",
      "tokenizer.json",
      "tokenizer_config.json",
    ]);
    assert.deepEqual(readdirSync(dir("llama")).sort(), [...s.files].sort());
    assert.equal(s.parameterCount, 295_392);
    assert.equal(s.tokenizerVocabSize, 512);
    const config = JSON.parse(readFileSync(path.join(dir("llama"), "config.json"), "utf8")) as Record<
      string,
      unknown
    >;
    assert.equal(config["dtype"], "float32");
    assert.deepEqual(config["architectures"], ["LlamaForCausalLM"]);
    const file = path.join(dir("llama"), "model.safetensors");
    // Pinned: the same seed must give the same bytes on every machine and Node version.
    assert.equal(sha256(file), PINNED_TINY_LLAMA_SEED0);
    const norm = f32Values(tensorData(file, "model.layers.1.input_layernorm.weight").bytes);
    assert.ok(norm.every((x) => x === 1));
    const q = f32Values(tensorData(file, "model.layers.0.self_attn.q_proj.weight").bytes);
    const sd = Math.sqrt(q.reduce((a, x) => a + x * x, 0) / q.length);
    assert.ok(Math.abs(sd - 0.16) < 0.005, `std ${sd}`);
  });

  it("gives byte-identical files for the same seed and different weights for another", async () => {
    const opts: CreateCheckpointOptions = { arch: "mixtral", preset: "tiny", seed: 42, out: dir("a") };
    const a = await createCheckpoint(opts);
    await createCheckpoint({ ...opts, out: dir("b") });
    await createCheckpoint({ ...opts, seed: 43, out: dir("c") });
    for (const f of a.files) assert.equal(sha256(path.join(dir("a"), f)), sha256(path.join(dir("b"), f)), f);
    assert.notEqual(
      sha256(path.join(dir("a"), "model.safetensors")),
      sha256(path.join(dir("c"), "model.safetensors")),
    );
    assert.equal(
      sha256(path.join(dir("a"), "tokenizer.json")),
      sha256(path.join(dir("c"), "tokenizer.json")),
    );
  });

  it("writes float16 and bfloat16 as the rounded float32 weights", async () => {
    const seed = 5;
    await createCheckpoint({ arch: "qwen2", preset: "tiny", seed, out: dir("q32") });
    await createCheckpoint({ arch: "qwen2", preset: "tiny", seed, out: dir("q16"), dtype: "float16" });
    await createCheckpoint({ arch: "qwen2", preset: "tiny", seed, out: dir("qbf"), dtype: "bfloat16" });
    const name = "model.layers.0.self_attn.k_proj.bias";
    const ref = f32Values(tensorData(path.join(dir("q32"), "model.safetensors"), name).bytes);
    assert.ok(
      ref.some((x) => x !== 0),
      "biases are random, not zero",
    );
    for (const [d, conv, dtype] of [
      ["q16", toF16Bits, "F16"],
      ["qbf", toBf16Bits, "BF16"],
    ] as const) {
      const t = tensorData(path.join(dir(d), "model.safetensors"), name);
      assert.equal(t.dtype, dtype);
      assert.deepEqual(t.shape, [32]);
      const bits = Array.from({ length: ref.length }, (_, i) => t.bytes.readUInt16LE(2 * i));
      assert.deepEqual(bits, Array.from(ref, conv));
      const config = JSON.parse(readFileSync(path.join(dir(d), "config.json"), "utf8")) as Record<
        string,
        unknown
      >;
      assert.equal(config["dtype"], d === "q16" ? "float16" : "bfloat16");
    }
    const header = parseSafetensorsHeader(readFileSync(path.join(dir("q16"), "model.safetensors")));
    assert.ok(!header.tensors.some(([n]) => n === "lm_head.weight"), "tied embeddings: no lm_head");
  });

  it("shards the weights with an index, and replaces them when rewritten unsharded", async () => {
    const out = dir("sharded");
    const s = await createCheckpoint({
      arch: "llama",
      preset: "small",
      seed: 1,
      out,
      maxShardBytes: 4_000_000,
    });
    const shards = s.files.filter((f) => f.startsWith("model-"));
    assert.ok(shards.length >= 4, shards.join());
    assert.equal(shards[0], `model-00001-of-${String(shards.length).padStart(5, "0")}.safetensors`);
    const index = JSON.parse(readFileSync(path.join(out, "model.safetensors.index.json"), "utf8")) as {
      metadata: { total_size: number };
      weight_map: Record<string, string>;
    };
    assert.equal(index.metadata.total_size, s.parameterCount * 4);
    let count = 0;
    for (const f of shards) {
      const h = parseSafetensorsHeader(readFileSync(path.join(out, f)));
      const size = h.tensors.reduce((n, [, e]) => n + e.data_offsets[1] - e.data_offsets[0], 0);
      assert.ok(size <= 4_000_000 || h.tensors.length === 1, `${f}: ${size}`);
      for (const [n] of h.tensors) assert.equal(index.weight_map[n], f);
      count += h.tensors.length;
    }
    assert.equal(count, Object.keys(index.weight_map).length);

    await createCheckpoint({ arch: "llama", preset: "small", seed: 1, out });
    assert.ok(!readdirSync(out).some((f) => f.startsWith("model-") || f.endsWith(".index.json")));
  });

  it("names the valid values for an unknown arch, preset or dtype", async () => {
    const bad = (opts: Partial<Record<keyof CreateCheckpointOptions, unknown>>) =>
      createCheckpoint({
        arch: "llama",
        preset: "tiny",
        seed: 0,
        out: dir("bad"),
        ...opts,
      } as CreateCheckpointOptions);
    const isInvalid = (re: RegExp) => (e: unknown) =>
      e instanceof TesseraError && e.code === Code.INVALID_ARGUMENT && re.test(e.message);
    await assert.rejects(bad({ arch: "gpt2" }), isInvalid(/valid: llama, mistral, qwen2, mixtral/));
    await assert.rejects(bad({ preset: "xl" }), isInvalid(/valid: tiny, small, base/));
    await assert.rejects(bad({ dtype: "int8" }), isInvalid(/valid: float32, float16, bfloat16/));
    await assert.rejects(bad({ seed: -1 }), isInvalid(/seed/));
    await assert.rejects(bad({ seed: 1.5 }), isInvalid(/seed/));
    await assert.rejects(bad({ maxShardBytes: 0 }), isInvalid(/maxShardBytes/));
  });

  it("says clearly when the output folder cannot be written", async () => {
    const file = dir("a-file");
    writeFileSync(file, "x");
    for (const out of [file, path.join(file, "model")]) {
      await assert.rejects(
        createCheckpoint({ arch: "llama", preset: "tiny", seed: 0, out }),
        (e: unknown) =>
          e instanceof TesseraError &&
          e.code === Code.FAILED_PRECONDITION &&
          e.message.startsWith(`out: cannot write a checkpoint into ${out}: `),
      );
    }
  });

  it("writes the ~88M-parameter base preset in well under a minute", async () => {
    const t0 = performance.now();
    const s = await createCheckpoint({
      arch: "llama",
      preset: "base",
      seed: 0,
      out: dir("base"),
      dtype: "bfloat16",
    });
    const seconds = (performance.now() - t0) / 1000;
    assert.equal(s.parameterCount, 88_099_584);
    const header = parseSafetensorsHeader(readFileSync(path.join(dir("base"), "model.safetensors")));
    assert.equal(header.tensors.length, 2 + 1 + 12 * 9);
    assert.ok(seconds < 30, `${seconds} s`);
    rmSync(dir("base"), { recursive: true });
  });
});

const PINNED_TINY_LLAMA_SEED0 = "aafa2cd7c98ec03be710b7a3a42d9b7b9f976af7dac0d2e16b1cc0dcd69aed61";
