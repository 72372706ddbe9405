// The rope tables we build equal transformers' own (devtools/reference/expected/rope.json records its
// rope init functions for yarn with and without mscale, attention_factor, beta_* and truncate, and for
// dynamic at several lengths), config.json's rope fields are read as transformers reads them, and a
// variant we cannot honour is refused naming its field.
import assert from "node:assert/strict";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { ropeReference } from "../testdata/rope-reference.ts";
import "./builtin.ts";
import type { DecoderConfig } from "./decoder-config.ts";
import { resolveArchitecture } from "./registry.ts";
import { ropeAttentionFactor, ropeInverseFrequencies } from "./rope.ts";

/** The tiny preset's config.json (llama or qwen2), with `fields` on top. */
function tinyConfig(arch: "llama" | "qwen2", fields: Record<string, unknown>): Record<string, unknown> {
  return {
    architectures: [arch === "llama" ? "LlamaForCausalLM" : "Qwen2ForCausalLM"],
    model_type: arch,
    hidden_size: 96,
    num_hidden_layers: 2,
    num_attention_heads: 6,
    num_key_value_heads: 2,
    intermediate_size: 256,
    vocab_size: 512,
    max_position_embeddings: 512,
    rope_parameters: { rope_type: "default", rope_theta: arch === "llama" ? 10000 : 1e6 },
    ...fields,
  };
}

function parse(raw: Record<string, unknown>) {
  const def = resolveArchitecture(raw);
  if (def.error) throw def.error;
  return def.value.parseConfig(raw);
}

function config(raw: Record<string, unknown>): DecoderConfig {
  const c = parse(raw);
  if (c.error) throw c.error;
  return c.value;
}

/** Largest difference in units of the last place of float32 (2^-23 relative). */
function ulps(got: Float32Array, want: number[]): number {
  return want.reduce((m, w, i) => Math.max(m, Math.abs(got[i]! - w) / (Math.abs(w) * 2 ** -23)), 0);
}

describe("rope tables against transformers", () => {
  for (const t of ropeReference().inverse_frequencies) {
    it(`${t.name}: the same inverse frequencies and attention factor`, () => {
      const c = config(tinyConfig(t.arch as "llama" | "qwen2", t.config));
      const inv = ropeInverseFrequencies(c, t.seq_len ?? 0);
      assert.equal(inv.length, t.inv_freq.length);
      // torch's float32 pow may differ from a rounded float64 pow by one unit in the last place.
      assert.ok(ulps(inv, t.inv_freq) <= 2, `off by ${ulps(inv, t.inv_freq)} ulps`);
      assert.ok(Math.abs(ropeAttentionFactor(c) - t.attention_factor) < 1e-12);
    });
  }
});

describe("rope_scaling in config.json", () => {
  const refused = (field: RegExp) => (e: unknown) =>
    e instanceof TesseraError && e.code === Code.INVALID_ARGUMENT && field.test(e.message);

  it("reads the legacy rope_scaling key with `type` as rope_parameters", () => {
    const raw = tinyConfig("llama", {
      rope_parameters: undefined,
      rope_theta: 10000,
      rope_scaling: { type: "yarn", factor: 4, original_max_position_embeddings: 32 },
    });
    assert.deepEqual(config(raw).ropeScaling, {
      type: "yarn",
      factor: 4,
      originalMaxPositions: 32,
      betaFast: 32,
      betaSlow: 1,
      truncate: true,
      attentionFactor: 0.1 * Math.log(4) + 1,
    });
  });

  it("serves yarn to original context × factor and dynamic to max_position_embeddings × factor", () => {
    const yarn = { rope_type: "yarn", rope_theta: 1e6, factor: 4, original_max_position_embeddings: 32768 };
    assert.equal(
      config(tinyConfig("qwen2", { max_position_embeddings: 32768, rope_parameters: yarn })).maxContext,
      131072,
    );
    const dynamic = { rope_type: "dynamic", rope_theta: 1e4, factor: 2 };
    assert.equal(
      config(tinyConfig("llama", { max_position_embeddings: 4096, rope_parameters: dynamic })).maxContext,
      8192,
    );
    assert.equal(config(tinyConfig("llama", {})).maxContext, 512);
  });

  it("refuses a dynamic original_max_position_embeddings that transformers would ignore", () => {
    const rope = { rope_type: "dynamic", rope_theta: 1e4, factor: 2, original_max_position_embeddings: 256 };
    assert.throws(
      () => config(tinyConfig("llama", { rope_parameters: rope })),
      refused(/config\.json rope_parameters\.original_max_position_embeddings/),
    );
    const same = { ...rope, original_max_position_embeddings: 512 };
    assert.equal(config(tinyConfig("llama", { rope_parameters: same })).ropeScaling.type, "dynamic");
  });

  it("refuses dynamic without a factor, and rope types it does not know, naming the field", () => {
    assert.throws(
      () => config(tinyConfig("llama", { rope_scaling: { type: "dynamic" }, rope_parameters: undefined })),
      refused(/config\.json rope_scaling\.factor/),
    );
    assert.throws(
      () => config(tinyConfig("llama", { rope_parameters: { rope_type: "longrope", rope_theta: 1e4 } })),
      refused(
        /rope_parameters\.rope_type: longrope is not supported \(supported: default, linear, llama3, yarn, dynamic\)/,
      ),
    );
  });

  it("keeps dynamic's table at the base one up to max_position_embeddings", () => {
    const c = config(
      tinyConfig("llama", { rope_parameters: { rope_type: "dynamic", rope_theta: 1e4, factor: 2 } }),
    );
    const base = config(tinyConfig("llama", {}));
    assert.deepEqual(ropeInverseFrequencies(c, 512), ropeInverseFrequencies(base));
    assert.notDeepEqual(ropeInverseFrequencies(c, 513), ropeInverseFrequencies(base));
  });
});
