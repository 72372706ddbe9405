// config.json and generation_config.json as transformers 5.17 writes them for each architecture (the key
// sets of the reference checkpoints), from a ModelSpec, the tokenizer's special token ids and the rope.
import type { ModelSpec, RopeScalingName } from "./presets.ts";
import { type PyJson, type PyJsonObject, pyFloat, toPythonJson } from "./python-json.ts";
import { BOS_TOKEN_ID, EOS_TOKEN_ID, PAD_TOKEN_ID } from "./tokenizer-files.ts";
import type { SpecialTokenIds } from "./tokenizer-source.ts";

export type CheckpointDtype = "float32" | "float16" | "bfloat16";

const TRANSFORMERS_VERSION = "5.17.0";

const ARCHITECTURES: Readonly<Record<ModelSpec["arch"], string>> = {
  llama: "LlamaForCausalLM",
  mistral: "MistralForCausalLM",
  qwen2: "Qwen2ForCausalLM",
  mixtral: "MixtralForCausalLM",
};

/** The ids of the factory's own trained tokenizer. */
export const FACTORY_TOKEN_IDS: SpecialTokenIds = { bos: BOS_TOKEN_ID, eos: EOS_TOKEN_ID, pad: PAD_TOKEN_ID };

export interface ConfigOptions {
  readonly ids?: SpecialTokenIds | undefined;
  readonly ropeScaling?: RopeScalingName | undefined;
}

/**
 * rope_parameters as transformers 5 writes them. llama3: Llama 3.1's factor, frequency factors and theta,
 * with the original context a quarter of the preset's (Llama 3.1: 8192 of 131072), so that at head_dim 16
 * the rotary frequencies fall in all three of its bands (kept, blended, divided by the factor).
 */
function ropeParameters(spec: ModelSpec, scaling: RopeScalingName | undefined): PyJsonObject {
  if (scaling === undefined) return { rope_theta: pyFloat(spec.ropeTheta), rope_type: "default" };
  return {
    factor: pyFloat(8),
    high_freq_factor: pyFloat(4),
    low_freq_factor: pyFloat(1),
    original_max_position_embeddings: spec.maxPositionEmbeddings / 4,
    rope_theta: pyFloat(500000),
    rope_type: scaling,
  };
}

export function modelConfig(
  spec: ModelSpec,
  dtype: CheckpointDtype,
  options: ConfigOptions = {},
): PyJsonObject {
  const ids = options.ids ?? FACTORY_TOKEN_IDS;
  const common: PyJsonObject = {
    architectures: [ARCHITECTURES[spec.arch]],
    attention_dropout: pyFloat(0),
    bos_token_id: ids.bos,
    dtype,
    eos_token_id: ids.eos,
    hidden_act: "silu",
    hidden_size: spec.hiddenSize,
    initializer_range: pyFloat(0.02),
    intermediate_size: spec.intermediateSize,
    max_position_embeddings: spec.maxPositionEmbeddings,
    model_type: spec.arch,
    num_attention_heads: spec.numHeads,
    num_hidden_layers: spec.numLayers,
    num_key_value_heads: spec.numKvHeads,
    pad_token_id: ids.pad,
    rms_norm_eps: pyFloat(spec.rmsNormEps),
    rope_parameters: ropeParameters(spec, options.ropeScaling),
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

/** generation_config.json; a token id the tokenizer lacks is left out, as transformers leaves out None. */
export function generationConfig(ids: SpecialTokenIds = FACTORY_TOKEN_IDS): PyJsonObject {
  const id = (v: number | null): PyJson | undefined => (v === null ? undefined : v);
  return {
    _from_model_config: true,
    bos_token_id: id(ids.bos),
    eos_token_id: id(ids.eos),
    output_attentions: false,
    output_hidden_states: false,
    pad_token_id: id(ids.pad),
    transformers_version: TRANSFORMERS_VERSION,
    use_cache: true,
  };
}

/** config.json and generation_config.json texts: sorted keys, 2-space indent, final newline. */
export function configFileTexts(
  spec: ModelSpec,
  dtype: CheckpointDtype,
  options: ConfigOptions = {},
): { "config.json": string; "generation_config.json": string } {
  return {
    "config.json": `${toPythonJson(modelConfig(spec, dtype, options), { sortKeys: true })}\n`,
    "generation_config.json": `${toPythonJson(generationConfig(options.ids), { sortKeys: true })}\n`,
  };
}
