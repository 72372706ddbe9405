// LlamaForCausalLM, and the tensor naming the whole Llama family shares.
import type { Result } from "../../kernel/errors.ts";
import { type DecoderConfig, parseHfConfig, toDecoderConfig } from "./decoder-config.ts";
import type { ArchitectureDefinition, LayerWeightNames, WeightNames } from "./registry.ts";

export function llamaLayerNames(i: number): LayerWeightNames {
  const p = `model.layers.${i}`;
  return {
    inputNorm: `${p}.input_layernorm.weight`,
    postAttentionNorm: `${p}.post_attention_layernorm.weight`,
    q: `${p}.self_attn.q_proj.weight`,
    k: `${p}.self_attn.k_proj.weight`,
    v: `${p}.self_attn.v_proj.weight`,
    o: `${p}.self_attn.o_proj.weight`,
    qBias: `${p}.self_attn.q_proj.bias`,
    kBias: `${p}.self_attn.k_proj.bias`,
    vBias: `${p}.self_attn.v_proj.bias`,
    mlp: {
      gate: `${p}.mlp.gate_proj.weight`,
      up: `${p}.mlp.up_proj.weight`,
      down: `${p}.mlp.down_proj.weight`,
    },
    moe: undefined,
  };
}

export function llamaWeightNames(config: DecoderConfig, layer = llamaLayerNames): WeightNames {
  return {
    embed: "model.embed_tokens.weight",
    finalNorm: "model.norm.weight",
    lmHead: config.tieWordEmbeddings ? "model.embed_tokens.weight" : "lm_head.weight",
    layer,
  };
}

/** A Llama-family definition whose config needs at most a few architecture-specific overrides. */
export function llamaFamily(
  name: string,
  modelTypes: string[],
  overrides: (
    hf: NonNullable<ReturnType<typeof parseHfConfig>["value"]>,
  ) => Partial<DecoderConfig> = () => ({}),
): ArchitectureDefinition {
  return {
    name,
    modelTypes,
    parseConfig(raw: unknown): Result<DecoderConfig> {
      const hf = parseHfConfig(raw);
      if (hf.error) return hf;
      return toDecoderConfig(name, hf.value, overrides(hf.value));
    },
    weightNames: (config) => llamaWeightNames(config),
  };
}

export const llama = llamaFamily("LlamaForCausalLM", ["llama"]);
