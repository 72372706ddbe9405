import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { REFERENCE_DIR } from "../testdata/reference.ts";
import { describeCheckpoint } from "./checkpoint.ts";
import { SafetensorsFile } from "./safetensors.ts";
import { WeightStore } from "./weights.ts";

const tiny = (name: string) => path.join(REFERENCE_DIR, name);

function copyCheckpoint(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tessera-ckpt-"));
  fs.cpSync(tiny(name), dir, { recursive: true });
  for (const f of fs.readdirSync(dir)) fs.chmodSync(path.join(dir, f), 0o644);
  return dir;
}

const isError = (code: number, pattern: RegExp) => (e: unknown) =>
  e instanceof TesseraError && e.code === code && pattern.test(e.message);

describe("describeCheckpoint", () => {
  it("detects each architecture and its features from config.json", () => {
    const qwen = describeCheckpoint(tiny("tiny-qwen2"));
    assert.equal(qwen.config.architecture, "Qwen2ForCausalLM");
    assert.equal(qwen.config.qkvBias, true);
    assert.equal(qwen.config.tieWordEmbeddings, true);
    assert.equal(qwen.config.ropeTheta, 1_000_000);
    const mixtral = describeCheckpoint(tiny("tiny-mixtral"));
    assert.deepEqual(mixtral.config.moe, { numExperts: 4, topK: 2, normalizeTopK: true });
    const llama = describeCheckpoint(tiny("tiny-llama"));
    assert.deepEqual([llama.config.numHeads, llama.config.numKvHeads, llama.config.headDim], [6, 2, 16]);
    assert.deepEqual(llama.eosTokenIds, [2]);
    assert.equal(llama.dtype, "float32");
  });

  it("takes eos ids and sampling defaults from generation_config.json, else config.json's eos", () => {
    const dir = copyCheckpoint("tiny-llama");
    const file = path.join(dir, "generation_config.json");
    fs.writeFileSync(
      file,
      JSON.stringify({ do_sample: true, eos_token_id: [2, 5], temperature: 0.6, top_p: 0.9 }),
    );
    const described = describeCheckpoint(dir);
    assert.deepEqual(described.eosTokenIds, [2, 5]);
    assert.deepEqual(described.generation, { sampling: { temperature: 0.6, topP: 0.9 }, notApplied: [] });
    fs.rmSync(file);
    const bare = describeCheckpoint(dir);
    assert.deepEqual(bare.eosTokenIds, [2]);
    assert.deepEqual(bare.generation, { sampling: {}, notApplied: [] });
    fs.writeFileSync(file, JSON.stringify({ temperature: -0.5 }));
    assert.throws(
      () => describeCheckpoint(dir),
      isError(Code.INVALID_ARGUMENT, /generation_config\.json: temperature/),
    );
  });

  it("names the supported architectures when config.json asks for another", () => {
    const dir = copyCheckpoint("tiny-llama");
    const config = JSON.parse(fs.readFileSync(path.join(dir, "config.json"), "utf8"));
    fs.writeFileSync(
      path.join(dir, "config.json"),
      JSON.stringify({ ...config, architectures: ["GPT2LMHeadModel"] }),
    );
    assert.throws(
      () => describeCheckpoint(dir),
      isError(
        Code.INVALID_ARGUMENT,
        /GPT2LMHeadModel.*LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM, Qwen2ForCausalLM/,
      ),
    );
  });

  it("reports a missing folder and a folder that is not a checkpoint", () => {
    assert.throws(() => describeCheckpoint("/nonexistent/model"), isError(Code.NOT_FOUND, /does not exist/));
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), "tessera-empty-"));
    assert.throws(() => describeCheckpoint(empty), isError(Code.NOT_FOUND, /config\.json is missing/));
  });

  it("names the config field that is wrong", () => {
    const dir = copyCheckpoint("tiny-llama");
    const config = JSON.parse(fs.readFileSync(path.join(dir, "config.json"), "utf8"));
    fs.writeFileSync(path.join(dir, "config.json"), JSON.stringify({ ...config, hidden_size: -4 }));
    assert.throws(() => describeCheckpoint(dir), isError(Code.INVALID_ARGUMENT, /hidden_size/));
  });
});

describe("safetensors", () => {
  it("rejects truncated and garbled files with a clear error", () => {
    const dir = copyCheckpoint("tiny-llama");
    const file = path.join(dir, "model.safetensors");
    const bytes = fs.readFileSync(file);
    fs.writeFileSync(file, bytes.subarray(0, bytes.length - 1000));
    assert.throws(
      () => SafetensorsFile.open(file),
      isError(Code.INVALID_ARGUMENT, /corrupt safetensors.*past the end/),
    );
    fs.writeFileSync(file, Buffer.from("garbage that is not a safetensors file at all"));
    assert.throws(() => SafetensorsFile.open(file), isError(Code.INVALID_ARGUMENT, /corrupt safetensors/));
  });

  it("reads sharded checkpoints through model.safetensors.index.json", () => {
    const store = WeightStore.open(tiny("tiny-llama"));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tessera-shards-"));
    const names = store.names();
    const shards = [names.slice(0, 5), names.slice(5)];
    const weightMap: Record<string, string> = {};
    shards.forEach((shard, i) => {
      const file = `model-0000${i + 1}-of-00002.safetensors`;
      writeSafetensors(
        path.join(dir, file),
        shard.map((n) => [n, store.read(n)] as const),
      );
      for (const n of shard) weightMap[n] = file;
    });
    fs.writeFileSync(
      path.join(dir, "model.safetensors.index.json"),
      JSON.stringify({ weight_map: weightMap }),
    );
    const sharded = WeightStore.open(dir);
    assert.deepEqual(sharded.names().sort(), names.sort());
    for (const n of names) assert.deepEqual(sharded.read(n).data, store.read(n).data);
  });
});

/** A minimal F32 safetensors writer, for building test files only. */
function writeSafetensors(
  file: string,
  tensors: (readonly [string, { shape: number[]; data: Float32Array }])[],
): void {
  const header: Record<string, unknown> = {};
  let offset = 0;
  for (const [name, t] of tensors) {
    header[name] = { dtype: "F32", shape: t.shape, data_offsets: [offset, offset + t.data.byteLength] };
    offset += t.data.byteLength;
  }
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  fs.writeFileSync(
    file,
    Buffer.concat([
      len,
      json,
      ...tensors.map(([, t]) => Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)),
    ]),
  );
}
