// Qwen2ForCausalLM: Llama with biases on q, k and v (always, whatever attention_bias says) and,
// in the small sizes, embeddings tied to the output head. The sliding window applies only with
// use_sliding_window, and then, as transformers decides per layer, only to the layers that
// layer_types marks sliding_attention (by default those from max_window_layers on).
import type { Result } from "../../kernel/errors.ts";
import { TesseraError } from "../../kernel/errors.ts";
import {
  type DecoderConfig,
  type HfDecoderConfig,
  parseHfConfig,
  toDecoderConfig,
} from "./decoder-config.ts";
import { llamaWeightNames } from "./llama.ts";
import type { ArchitectureDefinition } from "./registry.ts";

/** transformers' Qwen2Config default. */
const MAX_WINDOW_LAYERS = 28;

/**
 * The window every layer has, or undefined when none has one. Our graph gives all layers one
 * attention mask, so a model mixing sliding and full layers is refused rather than run with the
 * wrong one.
 */
function slidingWindow(hf: HfDecoderConfig): Result<number | undefined> {
  const window = hf.use_sliding_window === true ? (hf.sliding_window ?? undefined) : undefined;
  if (window === undefined) return { value: undefined };
  const firstSliding = hf.max_window_layers ?? MAX_WINDOW_LAYERS;
  const types =
    hf.layer_types ??
    Array.from({ length: hf.num_hidden_layers }, (_, i) =>
      i >= firstSliding ? "sliding_attention" : "full_attention",
    );
  const sliding = types.filter((t) => t === "sliding_attention").length;
  if (sliding === 0) return { value: undefined };
  if (sliding === types.length) return { value: window };
  const field = hf.layer_types ? "layer_types" : "max_window_layers";
  return {
    error: TesseraError.invalidArgument(
      `config.json ${field}`,
      `${sliding} of ${types.length} layers use the sliding window and the others full attention; only all or none is supported`,
    ),
  };
}

function parseConfig(raw: unknown): Result<DecoderConfig> {
  const hf = parseHfConfig(raw);
  if (hf.error) return hf;
  const window = slidingWindow(hf.value);
  if (window.error) return window;
  return toDecoderConfig("Qwen2ForCausalLM", hf.value, { qkvBias: true, slidingWindow: window.value });
}

export const qwen2: ArchitectureDefinition = {
  name: "Qwen2ForCausalLM",
  modelTypes: ["qwen2"],
  parseConfig,
  weightNames: (config) => llamaWeightNames(config),
};
