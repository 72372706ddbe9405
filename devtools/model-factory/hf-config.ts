// config.json and generation_config.json as transformers 5.17 writes them for each architecture (the key
// sets of the reference checkpoints), from a ModelSpec.
import type { ModelSpec } from "./presets.ts";
import { type PyJsonObject, pyFloat, toPythonJson } from "./python-json.ts";
import { BOS_TOKEN_ID, EOS_TOKEN_ID, PAD_TOKEN_ID } from "./tokenizer-files.ts";

export type CheckpointDtype = "float32" | "float16" | "bfloat16";

const TRANSFORMERS_VERSION = "5.17.0";

const ARCHITECTURES: Readonly<Record<ModelSpec["arch"], string>> = {
  llama: "LlamaForCausalLM",
  mistral: "MistralForCausalLM",
  qwen2: "Qwen2ForCausalLM",
  mixtral: "MixtralForCausalLM",
};

export function modelConfig(spec: ModelSpec, dtype: CheckpointDtype): PyJsonObject {
  const common: PyJsonObject = {
    architectures: [ARCHITECTURES[spec.arch]],
    attention_dropout: pyFloat(0),
    bos_token_id: BOS_TOKEN_ID,
    dtype,
    eos_token_id: EOS_TOKEN_ID,
    hidden_act: "silu",
    hidden_size: spec.hiddenSize,
    initializer_range: pyFloat(0.02),
    intermediate_size: spec.intermediateSize,
    max_position_embeddings: spec.maxPositionEmbeddings,
    model_type: spec.arch,
    num_attention_heads: spec.numHeads,
    num_hidden_layers: spec.numLayers,
    num_key_value_heads: spec.numKvHeads,
    pad_token_id: PAD_TOKEN_ID,
    rms_norm_eps: pyFloat(spec.rmsNormEps),
    rope_parameters: { rope_theta: pyFloat(spec.ropeTheta), rope_type: "default" },
    tie_word_embeddings: spec.tieWordEmbeddings,
    transformers_version: TRANSFORMERS_VERSION,
    use_cache: true,
    vocab_size: spec.vocabSize,
  };
  switch (spec.arch) {
    case "llama":
      return {
        ...common,
        attention_bias: false,
        head_dim: spec.headDim,
        mlp_bias: false,
        pretraining_tp: 1,
      };
    case "mistral":
      return { ...common, head_dim: spec.headDim, sliding_window: null };
    case "qwen2":
      return {
        ...common,
        layer_types: Array.from({ length: spec.numLayers }, () => "full_attention"),
        max_window_layers: 28,
        sliding_window: null,
        use_sliding_window: false,
      };
    case "mixtral":
      return {
        ...common,
        head_dim: null, // transformers leaves it unset: hidden_size / num_attention_heads
        num_experts_per_tok: spec.expertsPerToken,
        num_local_experts: spec.numExperts,
        output_router_logits: false,
        router_aux_loss_coef: pyFloat(0.001),
        router_jitter_noise: pyFloat(0),
        sliding_window: null,
      };
    default: {
      const never: never = spec.arch;
      throw new Error(`unknown arch ${String(never)}`);
    }
  }
}

export function generationConfig(): PyJsonObject {
  return {
    _from_model_config: true,
    bos_token_id: BOS_TOKEN_ID,
    eos_token_id: EOS_TOKEN_ID,
    output_attentions: false,
    output_hidden_states: false,
    pad_token_id: PAD_TOKEN_ID,
    transformers_version: TRANSFORMERS_VERSION,
    use_cache: true,
  };
}

/** config.json and generation_config.json texts: sorted keys, 2-space indent, final newline. */
export function configFileTexts(
  spec: ModelSpec,
  dtype: CheckpointDtype,
): { "config.json": string; "generation_config.json": string } {
  return {
    "config.json": `${toPythonJson(modelConfig(spec, dtype), { sortKeys: true })}\n`,
    "generation_config.json": `${toPythonJson(generationConfig(), { sortKeys: true })}\n`,
  };
}
